package dev.llmresilience.protocol.anthropic;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.Wire;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code protocol: anthropic} over real HTTP through the auto-configuration: what Anthropic
 * receives (its headers, its {@code system} field, a {@code max_tokens}, OpenAI's field names
 * translated), what of its answer reaches the {@link ChatResponse}, and the SDK's recorded sessions
 * replayed.
 */
class AnthropicClientTests {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private static final String KEY = "sk-test-primary-0123456789";

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start(Wire.ANTHROPIC);
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void anthropicReceivesItsHeadersSystemFieldAndMaxTokens() throws Exception {
		this.upstreams.server("primary").enqueue(Wire.ANTHROPIC.answer("ok"));
		ChatRequest request = ChatRequest.builder().system("Be brief.").system("Answer in English.").user("hello").build();
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.headers.anthropic-beta=prompt-caching-2024-07-31")
			.run((context) -> assertThat(chat(context, request).content()).isEqualTo("ok"));
		RecordedRequest received = this.upstreams.server("primary").takeRequest();
		assertThat(received.getUrl().encodedPath()).isEqualTo("/v1/messages");
		assertThat(received.getHeaders().get("x-api-key")).isEqualTo(KEY);
		assertThat(received.getHeaders().get("Authorization")).isNull();
		assertThat(received.getHeaders().get("anthropic-version")).isEqualTo("2023-06-01");
		assertThat(received.getHeaders().get("anthropic-beta")).isEqualTo("prompt-caching-2024-07-31");
		JsonNode body = mapper.readTree(received.getBody().utf8());
		assertThat(body.get("model").asString()).isEqualTo("primary-model");
		assertThat(body.get("max_tokens").asInt()).isEqualTo(4096);
		assertThat(body.get("system").asString()).isEqualTo("Be brief.\n\nAnswer in English.");
		assertThat(body.get("messages")).hasSize(1);
		assertThat(body.get("messages").get(0).get("role").asString()).isEqualTo("user");
		assertThat(body.get("messages").get(0).get("content").asString()).isEqualTo("hello");
		assertThat(body.has("temperature")).isFalse();
	}

	@Test
	void configuredAnthropicVersionIsSent() throws Exception {
		this.upstreams.server("primary").enqueue(Wire.ANTHROPIC.answer("ok"));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.anthropic-version=2023-01-01")
			.run((context) -> assertThat(chat(context).content()).isEqualTo("ok"));
		assertThat(this.upstreams.server("primary").takeRequest().getHeaders().get("anthropic-version"))
			.isEqualTo("2023-01-01");
	}

	@Test
	void openAiFieldNamesAreTranslatedAndThoseWithoutAnEquivalentAreLeftOut() throws Exception {
		this.upstreams.server("primary").enqueue(Wire.ANTHROPIC.answer("ok"));
		Tool weather = Tool.function("get_weather", "The weather in a city",
				"{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}");
		ChatRequest request = ChatRequest.builder()
			.user("Weather in Paris?")
			.temperature(1.6)
			.maxTokens(200)
			.tool(weather)
			.toolChoice(ToolChoice.required())
			.extra("parallel_tool_calls", false)
			.extra("stop", "END")
			.extra("seed", 42)
			.extra("response_format", Map.of("type", "json_object"))
			.extra("top_k", 5)
			.build();
		this.upstreams.runner().run((context) -> assertThat(chat(context, request).content()).isEqualTo("ok"));
		JsonNode body = mapper.readTree(this.upstreams.server("primary").takeRequest().getBody().utf8());
		assertThat(body.get("temperature").asDouble()).isEqualTo(1.0);
		assertThat(body.get("max_tokens").asInt()).isEqualTo(200);
		JsonNode tool = body.get("tools").get(0);
		assertThat(tool.get("name").asString()).isEqualTo("get_weather");
		assertThat(tool.get("description").asString()).isEqualTo("The weather in a city");
		assertThat(tool.get("input_schema").get("properties").has("city")).isTrue();
		assertThat(tool.has("function")).isFalse();
		assertThat(body.get("tool_choice").get("type").asString()).isEqualTo("any");
		assertThat(body.get("tool_choice").get("disable_parallel_tool_use").asBoolean()).isTrue();
		assertThat(body.get("stop_sequences").get(0).asString()).isEqualTo("END");
		assertThat(body.get("top_k").asInt()).isEqualTo(5);
		assertThat(body.has("seed")).isFalse();
		assertThat(body.has("response_format")).isFalse();
		assertThat(body.has("stop")).isFalse();
		assertThat(body.has("parallel_tool_calls")).isFalse();
	}

	@Test
	void conversationEndingWithAnAssistantTurnIsSentWithoutTrailingWhitespace() throws Exception {
		this.upstreams.server("primary").enqueue(Wire.ANTHROPIC.answer(" forty-two."));
		ChatRequest request = ChatRequest.builder()
			.message(ChatMessage.user("Question?"))
			.message(ChatMessage.assistant("The answer is "))
			.build();
		this.upstreams.runner().run((context) -> assertThat(chat(context, request).content()).isEqualTo(" forty-two."));
		JsonNode messages = mapper.readTree(this.upstreams.server("primary").takeRequest().getBody().utf8())
			.get("messages");
		assertThat(messages.get(1).get("role").asString()).isEqualTo("assistant");
		assertThat(messages.get(1).get("content").asString()).isEqualTo("The answer is");
	}

	@Test
	void recordedAnswerIsReadWithItsModelUsageAndCost() {
		this.upstreams.server("primary").enqueue(json(200, fixture("anthropic/sdkpy-recorded-200-message.body.derived.json")));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.price.input-per-million=3",
					"llm.endpoints.primary.price.output-per-million=15")
			.run((context) -> {
				ChatResponse response = chat(context);
				assertThat(response.content()).startsWith("{\"items\":[{\"product_name\":\"Green Tea\"").endsWith("\"total\":14.0}");
				assertThat(response.model()).isEqualTo("claude-sonnet-4-5-20250929");
				assertThat(response.finishReason()).isEqualTo("stop");
				assertThat(response.usage()).isEqualTo(new Usage(406, 50));
				assertThat(response.cost()).isEqualByComparingTo(new BigDecimal("0.001968"));
			});
	}

	@Test
	void cachedPromptTokensCountAsPromptTokens() {
		this.upstreams.server("primary").enqueue(json(200, """
				{"type": "message", "model": "claude-sonnet-4-5", "role": "assistant", "stop_reason": "end_turn",
				 "content": [{"type": "text", "text": "Hi."}],
				 "usage": {"input_tokens": 10, "cache_creation_input_tokens": 200, "cache_read_input_tokens": 1000,
				           "output_tokens": 3}}
				"""));
		this.upstreams.runner().run((context) -> assertThat(chat(context).usage()).isEqualTo(new Usage(1210, 3)));
	}

	@Test
	void toolUseBlocksBecomeToolCallsWithTheirInputAsJsonText() {
		this.upstreams.server("primary").enqueue(json(200, """
				{"type": "message", "model": "claude-sonnet-4-5", "role": "assistant", "stop_reason": "tool_use",
				 "content": [{"type": "text", "text": "Let me look."},
				             {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}}],
				 "usage": {"input_tokens": 50, "output_tokens": 20}}
				"""));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.content()).isEqualTo("Let me look.");
			assertThat(response.finishReason()).isEqualTo("tool_calls");
			assertThat(response.toolCalls()).containsExactly(new ToolCall("toolu_01A", "get_weather", "{\"city\":\"Paris\"}"));
		});
	}

	@Test
	void recordedRateLimitsAreRetriedUntilTheRecordedAnswer() {
		replay("anthropic/sdkpy-recorded-429x2-then-200-nonstreaming.json");
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(response.content()).contains("Green Tea");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.RATE_LIMITED, Outcome.RATE_LIMITED, Outcome.SUCCESS);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(new BreakerCalls(3, 2, 1));
		});
	}

	@Test
	void recordedRateLimitsBeforeAStreamAreRetriedUntilTheRecordedStream() {
		replay("anthropic/sdkpy-recorded-429x2-then-200-streaming.json");
		this.upstreams.runner().run((context) -> {
			List<ChatChunk> chunks = context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("Order IDs?"))
				.collectList()
				.block(Duration.ofSeconds(10));
			assertThat(chunks.stream().map(ChatChunk::content).reduce("", String::concat)).isEqualTo("[12345,67890]");
			assertThat(chunks).extracting(ChatChunk::tier).containsOnly(Tier.PRIMARY);
			assertThat(chunks.get(chunks.size() - 1).usage()).isEqualTo(new Usage(135, 10));
			assertThat(this.upstreams.server("primary").getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(new BreakerCalls(3, 2, 1));
		});
	}

	@Test
	void providerMessageRepeatingTheKeyIsRedacted() {
		this.upstreams.server("primary").enqueue(json(401, "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\","
				+ "\"message\":\"invalid x-api-key " + KEY + "\"}}"));
		this.upstreams.runner().run((context) -> {
			Throwable error = catchThrowable(() -> dev.llmresilience.support.FakeUpstream.endpoint(context, "primary")
				.chat(ChatRequest.ofUser("hello"), (attempt) -> {
				})
				.block(Duration.ofSeconds(10)));
			assertThat(error).hasMessageContaining("HTTP 401").hasMessageContaining("invalid x-api-key [redacted]")
				.hasMessageNotContaining(KEY);
		});
	}

	private void replay(String recording) {
		AnthropicSessions.serve(AnthropicSessions.read(recording), this.upstreams.server("primary"));
	}

}
