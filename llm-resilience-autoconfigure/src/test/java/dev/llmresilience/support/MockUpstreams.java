package dev.llmresilience.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.autoconfigure.LlmAutoConfiguration;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.endpoint.EndpointRegistry;
import dev.llmresilience.endpoint.LlmEndpoint;
import dev.llmresilience.gateway.LlmGateway;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * Two local OpenAI-compatible upstreams, {@code primary} and {@code backup}, for the failure-rule
 * tests: a context runner wired to them, canned responses and fixtures, and the breaker counts a
 * user can read. Loopback only.
 */
public final class MockUpstreams implements AutoCloseable {

	/** The api-key of the {@code primary} endpoint. */
	public static final String PRIMARY_KEY = "sk-test-primary-0123456789abcdef";

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private final MockWebServer primary = new MockWebServer();

	private final MockWebServer backup = new MockWebServer();

	private MockUpstreams() {
	}

	/**
	 * Start both servers.
	 * @return the started upstreams
	 */
	public static MockUpstreams start() {
		MockUpstreams upstreams = new MockUpstreams();
		try {
			upstreams.primary.start();
			upstreams.backup.start();
		}
		catch (IOException ex) {
			upstreams.close();
			throw new UncheckedIOException(ex);
		}
		return upstreams;
	}

	public MockWebServer primary() {
		return this.primary;
	}

	public MockWebServer backup() {
		return this.backup;
	}

	/**
	 * A runner with two endpoints, {@code primary} (priority 0, with {@link #PRIMARY_KEY}) then
	 * {@code backup} (priority 1, no key), every other setting at its default except millisecond
	 * backoffs so retries do not slow the tests.
	 * @return the runner
	 */
	public ApplicationContextRunner runner() {
		return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
			.withPropertyValues("llm.endpoints.primary.base-url=" + this.primary.url("/v1"),
					"llm.endpoints.primary.model=primary-model", "llm.endpoints.primary.api-key=" + PRIMARY_KEY,
					"llm.endpoints.backup.base-url=" + this.backup.url("/v1"), "llm.endpoints.backup.model=backup-model",
					"llm.endpoints.backup.priority=1", "llm.defaults.retry.initial-backoff=1ms",
					"llm.defaults.retry.max-backoff=4ms");
	}

	@Override
	public void close() {
		this.primary.close();
		this.backup.close();
	}

	/**
	 * Call the gateway and wait for its answer.
	 * @param context a context from {@link #runner()}
	 * @param request the request
	 * @return the answer
	 */
	public static ChatResponse chat(ApplicationContext context, ChatRequest request) {
		return context.getBean(LlmGateway.class).chat(request).block(Duration.ofSeconds(20));
	}

	/**
	 * Call the gateway with one user message and wait for its answer.
	 * @param context a context from {@link #runner()}
	 * @return the answer
	 */
	public static ChatResponse chat(ApplicationContext context) {
		return chat(context, ChatRequest.ofUser("hello"));
	}

	public static LlmEndpoint endpoint(ApplicationContext context, String name) {
		LlmEndpoint endpoint = context.getBean(EndpointRegistry.class).endpoint(name);
		if (endpoint == null) {
			throw new IllegalArgumentException("No endpoint '" + name + "'");
		}
		return endpoint;
	}

	/**
	 * A successful completion whose message has the given content.
	 * @param content the content
	 * @return the response
	 */
	public static MockResponse completion(String content) {
		return json(200, completionBody(content));
	}

	public static String completionBody(String content) {
		return "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\",\"model\":\"served-model\",\"choices\":[{\"index\":0,"
				+ "\"message\":{\"role\":\"assistant\",\"content\":" + mapper.writeValueAsString(content)
				+ "},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":2,\"total_tokens\":7}}";
	}

	public static MockResponse json(int status, String body) {
		return new MockResponse.Builder().code(status).setHeader("Content-Type", "application/json").body(body).build();
	}

	/**
	 * A status with an OpenAI-style error body.
	 * @param status the status
	 * @param code the error's code
	 * @return the response
	 */
	public static MockResponse error(int status, String code) {
		return json(status, "{\"error\":{\"message\":\"upstream said " + status + "\",\"type\":\"server_error\",\"param\":null,"
				+ "\"code\":\"" + code + "\"}}");
	}

	/**
	 * A fixture from {@code src/test/resources/fixtures}.
	 * @param path the path below {@code fixtures/}
	 * @return its text
	 */
	public static String fixture(String path) {
		try (InputStream in = MockUpstreams.class.getResourceAsStream("/fixtures/" + path)) {
			if (in == null) {
				throw new IllegalArgumentException("No fixture " + path);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The response of an openai-dotnet session record: its first entry's status and body.
	 * @param path the record's path below {@code fixtures/}
	 * @return the response
	 */
	public static MockResponse recorded(String path) {
		JsonNode entry = mapper.readTree(fixture(path)).get("Entries").get(0);
		return json(entry.get("StatusCode").asInt(), mapper.writeValueAsString(entry.get("ResponseBody")));
	}

	/**
	 * The calls an endpoint's circuit breaker holds in its window.
	 *
	 * @param buffered calls in the window
	 * @param failed of which failures
	 * @param successful of which successes
	 */
	public record BreakerCalls(int buffered, int failed, int successful) {

		/** Nothing recorded. */
		public static final BreakerCalls NONE = new BreakerCalls(0, 0, 0);

		public static BreakerCalls of(ApplicationContext context, String endpoint) {
			return of(endpoint(context, endpoint).circuitBreaker());
		}

		public static BreakerCalls of(CircuitBreaker breaker) {
			CircuitBreaker.Metrics metrics = breaker.getMetrics();
			return new BreakerCalls(metrics.getNumberOfBufferedCalls(), metrics.getNumberOfFailedCalls(),
					metrics.getNumberOfSuccessfulCalls());
		}

		public static BreakerCalls failures(int count) {
			return new BreakerCalls(count, count, 0);
		}

		public static BreakerCalls successes(int count) {
			return new BreakerCalls(count, 0, count);
		}

	}

	/**
	 * A dispatcher that holds every request until {@link #open()}, then answers it with one
	 * response: a call that stays in flight for as long as a test needs, without sleeping.
	 */
	public static final class Gate extends Dispatcher {

		private final CountDownLatch opened = new CountDownLatch(1);

		private final MockResponse response;

		public Gate(MockResponse response) {
			this.response = response;
		}

		@Override
		public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
			this.opened.await(20, TimeUnit.SECONDS);
			return this.response;
		}

		public void open() {
			this.opened.countDown();
		}

		@Override
		public void close() {
			open();
		}

	}

}
