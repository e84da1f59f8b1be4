package dev.llmresilience.engine;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.web.reactive.function.client.WebClient;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.Answers.sse;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Keys and header values never show, wherever a user could look, and a key only ever goes to its
 * own endpoint's host. A real web application with two endpoints, each with a recognisable key and
 * header value, logs at TRACE ({@code dev.llmresilience}, WebClient's exchange and Spring's codecs,
 * with {@code spring.http.codecs.log-request-details=true}) and DEBUG (Reactor Netty) while its
 * calls, plain and streamed, fail in every way: statuses whose error messages, types and codes echo
 * the key (whole, masked as OpenAI does, after "Bearer") and the header value, error events in a
 * stream before and after its first token, answers that name the key as their model, timeouts,
 * resets, a redirect to a third server, unreadable bodies, caller errors, the busy answer as an
 * error, and a deferred request refused in the background. Then everything a user can read is
 * scanned for the secrets: the output, every exception (message, {@code toString()}, stack trace
 * with its causes), every answer and its attempts, the {@code toString()} of our types, the
 * actuator's {@code llmbreakers}, {@code health}, {@code configprops}, {@code env} and
 * {@code metrics} over HTTP, and every meter's tags; and the models the answers made up are no tags
 * of the starter's meters.
 */
@ExtendWith(OutputCaptureExtension.class)
class KeySafetyTests {

	private static final String PRIMARY_KEY = "sk-KEYSAFETY-" + UUID.randomUUID();

	private static final String BACKUP_KEY = "sk-KEYSAFETY-" + UUID.randomUUID();

	private static final String PRIMARY_HEADER = "hdr-KEYSAFETY-" + UUID.randomUUID();

	private static final String BACKUP_HEADER = "hdr-KEYSAFETY-" + UUID.randomUUID();

	private static final String[] LOGGERS = { "dev.llmresilience", "reactor.netty",
			"org.springframework.web.reactive.function.client", "org.springframework.http.codec",
			"org.springframework.core.codec" };

	/** Part of the model name each hostile answer makes up anew. */
	private static final String HOSTILE_MODEL = "hostile-model-";

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private final MockWebServer primary = new MockWebServer();

	private final MockWebServer backup = new MockWebServer();

	private final MockWebServer elsewhere = new MockWebServer();

	/** Everything read from the application, to be scanned at the end. */
	private final List<String> seen = new ArrayList<>();

	@BeforeEach
	void start() throws IOException {
		this.primary.start();
		this.backup.start();
		this.elsewhere.start();
	}

	@AfterEach
	void stop() {
		this.primary.close();
		this.backup.close();
		this.elsewhere.close();
		LoggingSystem loggingSystem = LoggingSystem.get(getClass().getClassLoader());
		for (String logger : LOGGERS) {
			loggingSystem.setLogLevel(logger, null);
		}
	}

	@Test
	void keysAndHeaderValuesShowNowhereAndEachKeyGoesOnlyToItsOwnHost(CapturedOutput output) throws Exception {
		try (ConfigurableApplicationContext context = application()) {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			failInEveryWay(context, gateway);
			readEverythingAUserCanRead(context);
		}
		this.seen.add(output.getAll());

		assertThat(output).as("the output, at DEBUG and below").contains("DEBUG").contains("trying the next endpoint")
			.contains("TRACE");
		assertThat(String.join("\n", this.seen)).as("what was scanned")
			.contains("[redacted]", "Refused by the provider", "No endpoint of route 'default' could answer",
					"\"apiKey\":\"******\"", "\"llm.endpoints.primary.api-key\":{\"value\":\"******\"",
					"\"failedCalls\"", "gen_ai.client.operation.duration", "llm.gateway.calls");
		for (String secret : secrets()) {
			for (String shown : this.seen) {
				assertThat(shown).doesNotContain(secret);
			}
		}
		assertEachKeyWentOnlyToItsOwnHost();
	}

	private ConfigurableApplicationContext application() {
		return new SpringApplicationBuilder(KeySafetyApplication.class).properties(
				"server.port=0", "spring.main.web-application-type=reactive", "spring.main.banner-mode=off",
				"management.endpoints.web.exposure.include=*",
				// Spring Data Redis is on this module's test classpath (for shared state); this application has no Redis
				"management.health.redis.enabled=false",
				"management.endpoint.health.show-details=always", "logging.level.dev.llmresilience=TRACE",
				// request details (headers) in the exchange's TRACE log, and what the codecs read and write
				"spring.http.codecs.log-request-details=true", "logging.level.reactor.netty=DEBUG",
				"logging.level.org.springframework.web.reactive.function.client=TRACE",
				"logging.level.org.springframework.http.codec=TRACE", "logging.level.org.springframework.core.codec=TRACE",
				"llm.endpoints.primary.base-url=" + this.primary.url("/v1"), "llm.endpoints.primary.model=primary-model",
				"llm.endpoints.primary.api-key=" + PRIMARY_KEY,
				"llm.endpoints.primary.headers.OpenAI-Organization=" + PRIMARY_HEADER,
				"llm.endpoints.backup.base-url=" + this.backup.url("/v1"), "llm.endpoints.backup.model=backup-model",
				"llm.endpoints.backup.priority=1", "llm.endpoints.backup.api-key=" + BACKUP_KEY,
				"llm.endpoints.backup.headers.OpenAI-Organization=" + BACKUP_HEADER, "llm.endpoints.primary.timeout=1s",
				"llm.defaults.retry.max-attempts=2", "llm.defaults.retry.initial-backoff=1ms",
				"llm.defaults.retry.max-backoff=2ms", "llm.defaults.circuit-breaker.sliding-window-size=100",
				"llm.defaults.circuit-breaker.minimum-number-of-calls=100", "llm.gateway.deferral.delay=50ms",
				"llm.gateway.deferral.max-attempts=1")
			.run();
	}

	private void failInEveryWay(ConfigurableApplicationContext context, LlmGateway gateway) {
		// statuses whose messages echo the key (whole, after Bearer, masked) and the header value
		call(gateway, List.of(echo(500, "server_error"), echo(500, "server_error")), List.of(completion("ok")));
		call(gateway, List.of(echo(429, "rate_limit_exceeded"), echo(429, "rate_limit_exceeded")),
				List.of(completion("ok")));
		call(gateway, List.of(json(401, "{\"error\":{\"message\":\"Incorrect API key provided: " + masked(PRIMARY_KEY)
				+ ". You can find your API key at https://platform.openai.com/account/api-keys.\",\"type\":"
				+ "\"invalid_request_error\",\"param\":null,\"code\":\"invalid_api_key\"}}")), List.of(completion("ok")));
		call(gateway, List.of(echo(403, "unsupported_country_region_territory")), List.of(completion("ok")));
		call(gateway, List.of(echo(404, "model_not_found")), List.of(completion("ok")));
		call(gateway, List.of(echo(400, "content_filter")), List.of(completion("ok")));
		// the transport: timeouts, resets, a redirect to a third server
		MockResponse late = new MockResponse.Builder(completion("late")).headersDelay(3, TimeUnit.SECONDS).build();
		call(gateway, List.of(late, late), List.of(completion("ok")));
		MockResponse reset = new MockResponse.Builder(completion("never")).onResponseStart(new SocketEffect.CloseSocket())
			.build();
		call(gateway, List.of(reset, reset), List.of(completion("ok")));
		call(gateway, List.of(new MockResponse.Builder().code(307)
			.setHeader("Location", this.elsewhere.url("/v1/chat/completions").toString())
			.build()), List.of(completion("ok")));
		// bodies that are no answer, one of them a proxy page that echoes the request's headers
		MockResponse echoPage = json(200, "<html>Authorization: Bearer " + PRIMARY_KEY + "<br>OpenAI-Organization: "
				+ PRIMARY_HEADER + "</html>");
		call(gateway, List.of(echoPage, echoPage), List.of(completion("ok")));
		// caller errors: the provider's message reaches the caller in a typed exception
		call(gateway, List.of(echo(400, "invalid_request_error")), List.of());
		call(gateway, List.of(echo(400, "context_length_exceeded")), List.of());
		capture(() -> gateway.chat(ChatRequest.builder().user("hello").route("no-such-route").build())
			.block(Duration.ofSeconds(10)));
		// answers that name the key, and a new model each time, as their model
		for (int i = 0; i < 3; i++) {
			call(gateway, List.of(named(PRIMARY_KEY + " " + HOSTILE_MODEL + UUID.randomUUID())), List.of());
		}
		// streams: error events and statuses that echo the key before the first token, one after it,
		// and a stream whose every event names the key as its model
		stream(gateway, List.of(sse(errorEvent()), sse(errorEvent())), List.of(sse(Answers.stream("ok"))));
		stream(gateway, List.of(echo(500, "server_error"), echo(429, "rate_limit_exceeded")),
				List.of(sse(Answers.stream("ok"))));
		stream(gateway, List.of(sse(Answers.role() + Answers.content("Hel") + errorEvent())),
				List.of());
		stream(gateway, List.of(sse(Answers.stream("ok").replace("\"object\"",
				"\"model\":\"" + PRIMARY_KEY + " " + HOSTILE_MODEL + UUID.randomUUID() + "\",\"object\""))), List.of());
		// nothing answers: busy, busy as an error, and a deferred request the provider then refuses
		call(gateway, List.of(echo(500, "server_error"), echo(500, "server_error")),
				List.of(backupEcho(503, "overloaded"), backupEcho(503, "overloaded")));
		LlmGateway busyAsError = new DefaultLlmGateway(context.getBean(EndpointRegistry.class),
				new GatewaySettings(Duration.ofSeconds(30), "busy", "filtered", true, "deferred", false));
		call(busyAsError, List.of(echo(500, "server_error"), echo(500, "server_error")),
				List.of(backupEcho(502, "bad_gateway"), backupEcho(502, "bad_gateway")));
		this.primary.enqueue(echo(500, "server_error"));
		this.primary.enqueue(echo(500, "server_error"));
		this.backup.enqueue(backupEcho(500, "server_error"));
		this.backup.enqueue(backupEcho(500, "server_error"));
		this.primary.enqueue(echo(400, "invalid_request_error"));
		ChatResponse deferred = capture(() -> gateway.chat(ChatRequest.builder().user("the nightly report")
			.deferrable(true)
			.build()).block(Duration.ofSeconds(10)));
		assertThat(deferred.tier()).isEqualTo(Tier.DEFERRED);
		await().atMost(Duration.ofSeconds(10))
			.until(() -> gateway.deferred(deferred.ticket()).block().state() != DeferredResult.State.PENDING);
		DeferredResult refused = gateway.deferred(deferred.ticket()).block();
		assertThat(refused.state()).isEqualTo(DeferredResult.State.FAILED);
		assertThat(refused.reason()).contains("Refused by the provider");
		this.seen.add(String.valueOf(refused));
	}

	private void call(LlmGateway gateway, List<MockResponse> primary, List<MockResponse> backup) {
		primary.forEach(this.primary::enqueue);
		backup.forEach(this.backup::enqueue);
		capture(() -> gateway.chat(ChatRequest.ofUser("hello")).block(Duration.ofSeconds(10)));
	}

	private void stream(LlmGateway gateway, List<MockResponse> primary, List<MockResponse> backup) {
		primary.forEach(this.primary::enqueue);
		backup.forEach(this.backup::enqueue);
		List<?> chunks = capture(() -> gateway.stream(ChatRequest.ofUser("hello")).collectList().block(Duration.ofSeconds(10)));
		if (chunks != null) {
			assertThat(chunks).isNotEmpty();
		}
	}

	/** Run a call, keeping its answer or its error (message, toString, stack trace) to scan. */
	private <T> T capture(Supplier<T> call) {
		Object[] result = new Object[1];
		Throwable error = catchThrowable(() -> result[0] = call.get());
		if (error != null) {
			StringWriter trace = new StringWriter();
			error.printStackTrace(new PrintWriter(trace));
			this.seen.add(error.getMessage() + "\n" + error + "\n" + trace);
		}
		else {
			this.seen.add(String.valueOf(result[0]));
		}
		@SuppressWarnings("unchecked")
		T value = (T) result[0];
		return value;
	}

	private void readEverythingAUserCanRead(ConfigurableApplicationContext context) {
		EndpointRegistry registry = context.getBean(EndpointRegistry.class);
		for (LlmEndpoint endpoint : registry.endpoints()) {
			this.seen.add(endpoint + " " + endpoint.settings() + " " + endpoint.settings().upstream().apiKey() + " "
					+ context.getBean(BreakerTransitions.class).recent(endpoint.name()) + " " + endpoint.circuitBreaker() + " "
					+ endpoint.bulkhead());
		}
		LlmProperties properties = context.getBean(LlmProperties.class);
		this.seen.add(properties + " " + properties.getEndpoints() + " " + properties.getDefaults());
		this.seen.add(mapper.writeValueAsString(context.getBean(LlmBreakersEndpoint.class).breakers()));
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		WebClient http = WebClient.create("http://localhost:" + port);
		for (String path : List.of("/actuator/llmbreakers", "/actuator/llmbreakers/primary",
				"/actuator/llmbreakers/backup", "/actuator/health", "/actuator/health/llm", "/actuator/configprops",
				"/actuator/env", "/actuator/metrics")) {
			this.seen.add(get(http, path));
		}
		MeterRegistry meters = context.getBean(MeterRegistry.class);
		assertThat(meters.getMeters()).isNotEmpty();
		// the models the hostile answers named are no tags: one series per configured model, on the
		// starter's meters and on the timer Boot derives from the attempt observation
		for (String meter : List.of("gen_ai.client.operation.duration", "gen_ai.client.token.usage",
				"gen_ai.client.operation")) {
			assertThat(meters.find(meter).meters()).as(meter)
				.isNotEmpty()
				.extracting((each) -> each.getId().getTag("gen_ai.response.model"))
				.containsOnly("primary-model", "backup-model");
		}
		assertThat(meters.getMeters()).allSatisfy((meter) -> assertThat(meter.getId().toString()).as("meter tags")
			.doesNotContain(HOSTILE_MODEL));
		for (Meter meter : meters.getMeters()) {
			this.seen.add(meter.getId().toString());
			this.seen.add(get(http, "/actuator/metrics/" + meter.getId().getName()));
		}
	}

	private static String get(WebClient http, String path) {
		String body = http.get().uri(path).retrieve().bodyToMono(String.class).block(Duration.ofSeconds(10));
		assertThat(body).as(path).isNotBlank();
		return body;
	}

	private void assertEachKeyWentOnlyToItsOwnHost() throws InterruptedException {
		assertThat(this.elsewhere.getRequestCount()).as("requests that followed the redirect").isZero();
		assertOnlyItsOwn(this.primary, PRIMARY_KEY, PRIMARY_HEADER, BACKUP_KEY, BACKUP_HEADER);
		assertOnlyItsOwn(this.backup, BACKUP_KEY, BACKUP_HEADER, PRIMARY_KEY, PRIMARY_HEADER);
	}

	private static void assertOnlyItsOwn(MockWebServer server, String key, String header, String otherKey,
			String otherHeader) throws InterruptedException {
		assertThat(server.getRequestCount()).isPositive();
		for (int i = server.getRequestCount(); i > 0; i--) {
			RecordedRequest request = server.takeRequest(5, TimeUnit.SECONDS);
			assertThat(request).isNotNull();
			assertThat(request.getHeaders().get("Authorization")).isEqualTo("Bearer " + key);
			assertThat(request.getHeaders().get("OpenAI-Organization")).isEqualTo(header);
			String whole = request.getRequestLine() + "\n" + request.getHeaders() + "\n" + request.getBody().utf8();
			assertThat(whole).doesNotContain(otherKey).doesNotContain(otherHeader);
		}
	}

	/**
	 * An OpenAI-style error from the primary whose message repeats the key it was sent, whole and
	 * after "Bearer", and its organization header's value, as a careless proxy or provider might.
	 */
	private static MockResponse echo(int status, String code) {
		return echo(status, code, PRIMARY_KEY, PRIMARY_HEADER);
	}

	/** A completion that names the given model. */
	private static MockResponse named(String model) {
		return json(200, "{\"model\":\"" + model + "\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
				+ "\"content\":\"ok\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1}}");
	}

	/** An error sent as a stream event, its message, type and code repeating the key and header value. */
	private static String errorEvent() {
		return "data: {\"error\":{\"message\":\"Stream for key " + PRIMARY_KEY + " (organization " + PRIMARY_HEADER
				+ ") failed\",\"type\":\"" + PRIMARY_KEY + "\",\"code\":\"" + PRIMARY_HEADER + "\"}}\n\n";
	}

	private static MockResponse backupEcho(int status, String code) {
		return echo(status, code, BACKUP_KEY, BACKUP_HEADER);
	}

	private static MockResponse echo(int status, String code, String key, String header) {
		return json(status, "{\"error\":{\"message\":\"Request with key " + key + " (Authorization: Bearer " + key
				+ ") for organization " + header + " failed\",\"type\":\"invalid_request_error " + key + " " + header
				+ "\",\"param\":null,\"code\":\"" + code + "\"}}");
	}

	/** The key as OpenAI's 401 repeats it: its first 8 and last 4 characters around asterisks. */
	private static String masked(String key) {
		return key.substring(0, 8) + "*".repeat(key.length() - 12) + key.substring(key.length() - 4);
	}

	/** The secrets, whole and by their first and last 8 characters. */
	private static List<String> secrets() {
		List<String> secrets = new ArrayList<>();
		for (String secret : List.of(PRIMARY_KEY, BACKUP_KEY, PRIMARY_HEADER, BACKUP_HEADER)) {
			secrets.add(secret);
			secrets.add(secret.substring(0, 8));
			secrets.add(secret.substring(secret.length() - 8));
		}
		return secrets;
	}

	@SpringBootConfiguration(proxyBeanMethods = false)
	@EnableAutoConfiguration
	static class KeySafetyApplication {

	}

}
