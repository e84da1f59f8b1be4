package dev.llmresilience.springai;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A Spring AI {@code ChatModel} as an endpoint ({@code protocol: spring-ai}): the application runs
 * as a user's would, with Spring AI's own Ollama auto-configuration pointed at a local server that
 * speaks Ollama's API, and the Ollama model named by {@code chat-model-bean}. Calls, streams and a
 * tool round trip go through the gateway to the model; the model's own retries are off, so the
 * endpoint's retry alone decides how often the server is asked; failures follow the failure rules.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SpringAiEndpointTests {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private final MockWebServer ollama = new MockWebServer();

	private FakeUpstream upstreams;

	private ConfigurableApplicationContext context;

	@BeforeAll
	void startApplication() throws IOException {
		this.ollama.start();
		this.upstreams = FakeUpstream.start();
		String ollamaUrl = this.ollama.url("/").toString();
		this.context = new SpringApplicationBuilder(App.class).run("--spring.main.web-application-type=none",
				"--spring.ai.ollama.base-url=" + ollamaUrl.substring(0, ollamaUrl.length() - 1),
				"--llm.endpoints.local.protocol=spring-ai", "--llm.endpoints.local.chat-model-bean=ollamaChatModel",
				"--llm.endpoints.local.model=llama3.2", "--llm.endpoints.backup.base-url=" + this.upstreams.backup().url("/v1"),
				"--llm.endpoints.backup.model=backup-model", "--llm.endpoints.backup.priority=1",
				"--llm.defaults.retry.max-attempts=2", "--llm.defaults.retry.initial-backoff=1ms",
				"--llm.defaults.retry.max-backoff=2ms");
	}

	@BeforeEach
	void forgetEarlierRequests() throws InterruptedException {
		while (this.ollama.takeRequest(1, TimeUnit.MILLISECONDS) != null) {
			// recorded by an earlier test
		}
	}

	@AfterEach
	void closeBreakers() {
		this.context.getBean(EndpointRegistry.class).endpoints().forEach((endpoint) -> endpoint.circuitBreaker().reset());
	}

	@AfterAll
	void stopApplication() {
		this.context.close();
		this.upstreams.close();
		this.ollama.close();
	}

	@Test
	void theModelAnswersThroughTheEndpointWithItsModelAndUsage() throws Exception {
		this.ollama.enqueue(ollama("{\"role\":\"assistant\",\"content\":\"Hi from Ollama\"}"));
		ChatResponse response = gateway().chat(ChatRequest.builder().user("hello").temperature(0.2).build()).block(Duration.ofSeconds(20));
		assertThat(response.content()).isEqualTo("Hi from Ollama");
		assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
		assertThat(response.endpoint()).isEqualTo("local");
		assertThat(response.model()).isEqualTo("llama3.2");
		assertThat(response.usage()).isEqualTo(new Usage(7, 3));
		JsonNode sent = mapper.readTree(this.ollama.takeRequest().getBody().utf8());
		assertThat(sent.get("model").asString()).isEqualTo("llama3.2");
		assertThat(sent.get("messages").get(0).get("content").asString()).isEqualTo("hello");
		assertThat(sent.get("options").get("temperature").asDouble()).isEqualTo(0.2);
	}

	@Test
	void theModelsOwnRetriesAreOffSoTheEndpointsRetryAloneAsksTwiceThenFallsBack() {
		assertThat(this.context.getEnvironment().getProperty("spring.ai.retry.max-attempts")).isEqualTo("0");
		int before = this.ollama.getRequestCount();
		this.ollama.enqueue(new MockResponse.Builder().code(500).body("{\"error\":\"model crashed\"}").build());
		this.ollama.enqueue(new MockResponse.Builder().code(500).body("{\"error\":\"model crashed\"}").build());
		this.upstreams.backup().enqueue(Answers.completion("from backup"));
		ChatResponse response = gateway().chat("hello").block(Duration.ofSeconds(20));
		assertThat(response.content()).isEqualTo("from backup");
		assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
		assertThat(response.attempts()).extracting(Attempt::outcome)
			.containsExactly(Outcome.SERVER_ERROR, Outcome.SERVER_ERROR, Outcome.SUCCESS);
		assertThat(this.ollama.getRequestCount() - before).isEqualTo(2);
	}

	@Test
	void anUnauthorizedModelIsAConfigurationErrorNotRetried() {
		int before = this.ollama.getRequestCount();
		this.ollama.enqueue(new MockResponse.Builder().code(401).body("{\"error\":\"unauthorized\"}").build());
		this.upstreams.backup().enqueue(Answers.completion("from backup"));
		ChatResponse response = gateway().chat("hello").block(Duration.ofSeconds(20));
		assertThat(response.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.CONFIGURATION_ERROR, Outcome.SUCCESS);
		assertThat(this.ollama.getRequestCount() - before).isEqualTo(1);
		assertThat(this.context.getBean(EndpointRegistry.class).endpoint("local").circuitBreaker().getMetrics()
			.getNumberOfFailedCalls()).isEqualTo(1);
	}

	@Test
	void anInvalidRequestIsTheCallersErrorAndDoesNotFallBack() {
		int before = this.upstreams.backup().getRequestCount();
		this.ollama.enqueue(new MockResponse.Builder().code(400).body("{\"error\":\"bad\"}").build());
		Throwable error = catchThrowable(() -> gateway().chat("hello").block(Duration.ofSeconds(20)));
		assertThat(error).isInstanceOf(LlmInvalidRequestException.class).hasMessageContaining("HTTP 400");
		assertThat(this.upstreams.backup().getRequestCount()).isEqualTo(before);
	}

	@Test
	void theModelStreamsThroughTheEndpoint() {
		this.ollama.enqueue(new MockResponse.Builder().code(200)
			.setHeader("Content-Type", "application/x-ndjson")
			.body(line("{\"role\":\"assistant\",\"content\":\"Hel\"}", false) + line("{\"role\":\"assistant\",\"content\":\"lo\"}", false)
					+ line("{\"role\":\"assistant\",\"content\":\"\"}", true))
			.build());
		List<ChatChunk> chunks = gateway().stream(ChatRequest.ofUser("hi")).collectList().block(Duration.ofSeconds(20));
		assertThat(chunks).extracting(ChatChunk::content).contains("Hel", "lo");
		assertThat(chunks).allSatisfy((chunk) -> assertThat(chunk.endpoint()).isEqualTo("local"));
		ChatChunk last = chunks.get(chunks.size() - 1);
		assertThat(last.finishReason()).isEqualTo("stop");
	}

	@Test
	void aToolRoundTripGoesThroughTheSpringAiModel() throws Exception {
		this.ollama.enqueue(ollama("{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"call_9\","
				+ "\"function\":{\"name\":\"lookup\",\"arguments\":{\"q\":\"llamas\"}}}]}"));
		this.ollama.enqueue(ollama("{\"role\":\"assistant\",\"content\":\"Llamas hum.\"}"));
		int before = this.ollama.getRequestCount();
		Tool lookup = Tool.function("lookup", "Looks a word up",
				"{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}},\"required\":[\"q\"]}");
		ChatRequest ask = ChatRequest.builder().user("What do llamas do?").tool(lookup).build();
		ChatResponse first = gateway().chat(ask).block(Duration.ofSeconds(20));
		assertThat(first.toolCalls()).containsExactly(new ToolCall("call_9", "lookup", "{\"q\":\"llamas\"}"));
		ChatResponse second = gateway().chat(ask.toBuilder()
			.message(first.toMessage())
			.toolResult("call_9", "lookup", "{\"fact\":\"llamas hum\"}")
			.build()).block(Duration.ofSeconds(20));
		assertThat(second.content()).isEqualTo("Llamas hum.");
		JsonNode firstSent = mapper.readTree(this.ollama.takeRequest().getBody().utf8());
		assertThat(firstSent.get("tools").get(0).get("function").get("name").asString()).isEqualTo("lookup");
		assertThat(firstSent.get("tools").get(0).get("function").get("parameters").get("required").get(0).asString()).isEqualTo("q");
		JsonNode messages = mapper.readTree(this.ollama.takeRequest().getBody().utf8()).get("messages");
		assertThat(messages).extracting((message) -> message.get("role").asString()).containsExactly("user", "assistant", "tool");
		assertThat(messages.get(1).get("tool_calls").get(0).get("function").get("name").asString()).isEqualTo("lookup");
		assertThat(messages.get(2).get("content").asString()).isEqualTo("{\"fact\":\"llamas hum\"}");
		assertThat(this.ollama.getRequestCount() - before).isEqualTo(2);
	}

	private LlmGateway gateway() {
		return this.context.getBean(LlmGateway.class);
	}

	private static MockResponse ollama(String message) {
		return new MockResponse.Builder().code(200).setHeader("Content-Type", "application/json").body(line(message, true)).build();
	}

	private static String line(String message, boolean done) {
		return "{\"model\":\"llama3.2\",\"created_at\":\"2026-11-29T12:00:00Z\",\"message\":" + message + ",\"done\":" + done
				+ (done ? ",\"done_reason\":\"stop\",\"prompt_eval_count\":7,\"eval_count\":3" : "") + "}\n";
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
