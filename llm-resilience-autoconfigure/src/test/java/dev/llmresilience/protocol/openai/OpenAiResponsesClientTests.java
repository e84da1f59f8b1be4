package dev.llmresilience.protocol.openai;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.LlmContextLengthExceededException;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.Wire;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;

import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.Answers.sse;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code protocol: openai-responses} over real HTTP through the auto-configuration: what the
 * Responses API receives (its path, key, input items, flat tools, {@code store: false}), and what
 * of its recorded answers and streams (fixtures/openai-responses) reaches the caller: text, tool
 * calls, finish reasons, usage and cost, and the errors a 200 carries.
 */
class OpenAiResponsesClientTests {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private static final Duration WAIT = Duration.ofSeconds(15);

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start(Wire.OPENAI_RESPONSES);
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void requestGoesToResponsesAsInputItemsWithFlatToolsAndStoreFalse() throws Exception {
		this.upstreams.server("primary").enqueue(Wire.OPENAI_RESPONSES.answer("ok"));
		Tool weather = Tool.function("get_weather", "The weather in a city",
				"{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}}");
		ChatRequest request = ChatRequest.builder()
			.system("Be brief.")
			.user("Weather in Paris?")
			.message(ChatMessage.assistant("Let me look.", List.of(new ToolCall("call_1", "get_weather",
					"{\"city\":\"Paris\"}"))))
			.toolResult("call_1", "get_weather", "18 C, cloudy")
			.message(ChatMessage.user(List.of(ContentPart.text("And this?"),
					ContentPart.imageUrl("https://example.com/sky.png"))))
			.tool(weather)
			.tool(Tool.function("now", null, null))
			.toolChoice(ToolChoice.function("get_weather"))
			.temperature(0.3)
			.maxTokens(200)
			.extra("top_p", 0.5)
			.build();
		this.upstreams.runner().run((context) -> assertThat(chat(context, request).content()).isEqualTo("ok"));
		RecordedRequest received = this.upstreams.server("primary").takeRequest();
		assertThat(received.getUrl().encodedPath()).isEqualTo("/v1/responses");
		assertThat(received.getHeaders().get("Authorization")).isEqualTo("Bearer sk-test-primary-0123456789");
		JsonNode body = mapper.readTree(received.getBody().utf8());
		assertThat(body.get("model").asString()).isEqualTo("primary-model");
		assertThat(body.get("store").asBoolean(true)).isFalse();
		assertThat(body.get("max_output_tokens").asInt()).isEqualTo(200);
		assertThat(body.get("temperature").asDouble()).isEqualTo(0.3);
		assertThat(body.get("top_p").asDouble()).isEqualTo(0.5);
		assertThat(body.has("messages")).isFalse();
		assertThat(body.has("max_tokens")).isFalse();
		assertThat(body.get("input").toString()).isEqualTo("[" //
				+ "{\"type\":\"message\",\"role\":\"system\",\"content\":\"Be brief.\"},"
				+ "{\"type\":\"message\",\"role\":\"user\",\"content\":\"Weather in Paris?\"},"
				+ "{\"type\":\"message\",\"role\":\"assistant\",\"content\":\"Let me look.\"},"
				+ "{\"type\":\"function_call\",\"call_id\":\"call_1\",\"name\":\"get_weather\","
				+ "\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"},"
				+ "{\"type\":\"function_call_output\",\"call_id\":\"call_1\",\"output\":\"18 C, cloudy\"},"
				+ "{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"And this?\"},"
				+ "{\"type\":\"input_image\",\"image_url\":\"https://example.com/sky.png\",\"detail\":\"auto\"}]}]");
		assertThat(body.get("tools").toString()).isEqualTo("[" //
				+ "{\"type\":\"function\",\"name\":\"get_weather\",\"description\":\"The weather in a city\","
				+ "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}},\"strict\":false},"
				+ "{\"type\":\"function\",\"name\":\"now\",\"parameters\":{\"type\":\"object\",\"properties\":{}},"
				+ "\"strict\":false}]");
		assertThat(body.get("tool_choice").toString()).isEqualTo("{\"type\":\"function\",\"name\":\"get_weather\"}");
	}

	@Test
	void extraFieldsTheClientWritesAreRefusedBeforeAnyCall() {
		ChatRequest request = ChatRequest.builder().user("hello").extra("store", true).build();
		this.upstreams.runner().run((context) -> {
			StepVerifier.create(context.getBean(LlmGateway.class).chat(request))
				.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(LlmInvalidRequestException.class)
					.hasMessageContaining("'store'"))
				.verify(WAIT);
			StepVerifier.create(context.getBean(LlmGateway.class)
				.chat(ChatRequest.builder().user("hello").extra("input", "other").build()))
				.expectError(LlmInvalidRequestException.class)
				.verify(WAIT);
		});
		assertThat(this.upstreams.server("primary").getRequestCount()).isZero();
	}

	@Test
	void recordedAnswerIsReadWithItsModelUsageAndCost() {
		this.upstreams.server("primary")
			.enqueue(json(200, fixture("openai-responses/pysdk-response-output-text.derived.json")));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.upstream-streaming=false",
					"llm.endpoints.primary.price.input-per-million=0.15",
					"llm.endpoints.primary.price.output-per-million=0.6")
			.run((context) -> {
				ChatResponse response = chat(context);
				assertThat(response.content()).startsWith("I can't provide real-time updates")
					.endsWith("so it's good to be prepared for variable weather!");
				assertThat(response.model()).isEqualTo("gpt-4o-mini-2024-07-18");
				assertThat(response.finishReason()).isEqualTo("stop");
				assertThat(response.usage()).isEqualTo(new Usage(14, 50));
				assertThat(response.cost()).isEqualByComparingTo(new BigDecimal("0.0000321"));
			});
	}

	@Test
	void functionCallItemsBecomeToolCalls() {
		this.upstreams.server("primary").enqueue(json(200, fixture("openai-responses/spec-responses-functions.json")));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(response.content()).isEmpty();
			assertThat(response.finishReason()).isEqualTo("tool_calls");
			assertThat(response.toolCalls()).containsExactly(new ToolCall("call_unLAR8MvFNptuiZK6K6HCy5k",
					"get_current_weather", "{\"location\":\"Boston, MA\",\"unit\":\"celsius\"}"));
			assertThat(response.usage()).isEqualTo(new Usage(291, 23));
		});
	}

	@Test
	void specStreamIsReadToResponseCompletedWithItsUsage() {
		this.upstreams.server("primary").enqueue(sse(fixture("openai-responses/spec-responses-streaming.derived.sse")));
		this.upstreams.runner().run((context) -> {
			List<ChatChunk> chunks = stream(context);
			assertThat(joined(chunks)).isEqualTo("Hi");
			ChatChunk last = chunks.get(chunks.size() - 1);
			assertThat(last.finishReason()).isEqualTo("stop");
			assertThat(last.usage()).isEqualTo(new Usage(37, 11));
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
		});
	}

	@Test
	void sdkStreamWithoutEventNamesAndATrailingDoneIsReadWhole() {
		this.upstreams.server("primary").enqueue(sse(fixture("openai-responses/sdknode-stream-standard-text.derived.sse")));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.content()).isEqualTo("Hello world");
			assertThat(response.model()).isEqualTo("gpt-4o-2024-08-06");
			assertThat(response.usage()).isEqualTo(new Usage(10, 2));
			assertThat(response.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
		});
	}

	@Test
	void streamedFunctionCallArrivesAsToolCallPiecesAndAWholeCallInChat() {
		String stream = fixture("openai-responses/composed-stream-function-call.sse");
		this.upstreams.server("primary").enqueue(sse(stream));
		this.upstreams.server("primary").enqueue(sse(stream));
		this.upstreams.runner().run((context) -> {
			List<ChatChunk> chunks = stream(context);
			List<ToolCallDelta> pieces = chunks.stream().flatMap((chunk) -> chunk.toolCalls().stream()).toList();
			assertThat(pieces).extracting(ToolCallDelta::index).containsOnly(0);
			assertThat(pieces.get(0).id()).isEqualTo("call_unLAR8MvFNptuiZK6K6HCy5k");
			assertThat(pieces.get(0).name()).isEqualTo("get_current_weather");
			assertThat(pieces.stream().map(ToolCallDelta::arguments).collect(Collectors.joining()))
				.isEqualTo("{\"location\":\"Boston, MA\",\"unit\":\"celsius\"}");
			assertThat(chunks.get(chunks.size() - 1).finishReason()).isEqualTo("tool_calls");
			ChatResponse response = chat(context);
			assertThat(response.toolCalls()).containsExactly(new ToolCall("call_unLAR8MvFNptuiZK6K6HCy5k",
					"get_current_weather", "{\"location\":\"Boston, MA\",\"unit\":\"celsius\"}"));
			assertThat(response.usage()).isEqualTo(new Usage(291, 23));
		});
	}

	@Test
	void functionCallSentOnlyWholeAtItsEndIsAToolCallToo() {
		JsonNode answer = mapper.readTree(fixture("openai-responses/spec-responses-functions.json"));
		String onlyDone = Wire.OPENAI_RESPONSES.streamStart() + "event: response.output_item.done\ndata: "
				+ "{\"type\":\"response.output_item.done\",\"output_index\":1,\"item\":" + answer.get("output").get(0)
				+ "}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":" + answer + "}\n\n";
		this.upstreams.server("primary").enqueue(sse(onlyDone));
		this.upstreams.runner().run((context) -> assertThat(chat(context).toolCalls())
			.containsExactly(new ToolCall("call_unLAR8MvFNptuiZK6K6HCy5k", "get_current_weather",
					"{\"location\":\"Boston, MA\",\"unit\":\"celsius\"}")));
	}

	@Test
	void incompleteAtMaxOutputTokensIsALengthFinish() {
		String incomplete = fixture("openai-responses/spec-event-response-incomplete.json");
		this.upstreams.server("primary")
			.enqueue(sse(Wire.OPENAI_RESPONSES.streamStart() + Wire.OPENAI_RESPONSES.text("Once upon a")
					+ "event: response.incomplete\ndata: " + compact(incomplete) + "\n\n"));
		this.upstreams.runner().run((context) -> {
			List<ChatChunk> chunks = stream(context);
			assertThat(joined(chunks)).isEqualTo("Once upon a");
			assertThat(chunks.get(chunks.size() - 1).finishReason()).isEqualTo("length");
		});
	}

	@Test
	void responseFailedBeforeTheFirstTextIsRetriedAsItsCodeSaysThenFallsBack() {
		String failed = "event: response.failed\ndata: "
				+ compact(fixture("openai-responses/spec-event-response-failed.json")) + "\n\n";
		for (int i = 0; i < 3; i++) {
			this.upstreams.server("primary").enqueue(sse(Wire.OPENAI_RESPONSES.streamStart() + failed));
		}
		this.upstreams.server("backup").enqueue(Wire.OPENAI_RESPONSES.answer("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SERVER_ERROR,
					Outcome.SERVER_ERROR, Outcome.SERVER_ERROR, Outcome.SUCCESS);
		});
	}

	@Test
	void responseFailedAfterTheFirstTextReachesTheCallerWithThePartialText() {
		this.upstreams.server("primary")
			.enqueue(sse(Wire.OPENAI_RESPONSES.streamStart() + Wire.OPENAI_RESPONSES.text("The answer")
					+ Wire.OPENAI_RESPONSES.text(" is") + "event: response.failed\ndata: "
					+ compact(fixture("openai-responses/spec-event-response-failed.json")) + "\n\n"));
		this.upstreams.runner().run((context) -> StepVerifier
			.create(context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("Question?")))
			.expectNextCount(2)
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOfSatisfying(LlmStreamInterruptedException.class,
					(interrupted) -> assertThat(interrupted.partial()).isEqualTo("The answer is")))
			.verify(WAIT));
	}

	@Test
	void contextLengthReportedInsideTheStreamReachesTheCaller() {
		this.upstreams.server("primary")
			.enqueue(sse(Wire.OPENAI_RESPONSES.streamStart() + "event: response.failed\ndata: "
					+ "{\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":"
					+ "\"context_length_exceeded\",\"message\":\"Your input exceeds the context window of this model.\"},"
					+ "\"output\":[]}}\n\n"));
		this.upstreams.runner().run((context) -> {
			StepVerifier.create(context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("a very long prompt")))
				.expectError(LlmContextLengthExceededException.class)
				.verify(WAIT);
			assertThat(this.upstreams.server("backup").getRequestCount()).isZero();
		});
	}

	@Test
	void rateLimitReportedAsAnErrorEventIsARateLimit() {
		MockResponse limited = sse(Wire.OPENAI_RESPONSES.streamStart() + "event: error\ndata: {\"type\":\"error\","
				+ "\"code\":\"rate_limit_exceeded\",\"message\":\"Rate limit reached\",\"param\":null}\n\n");
		for (int i = 0; i < 3; i++) {
			this.upstreams.server("primary").enqueue(limited);
		}
		this.upstreams.server("backup").enqueue(Wire.OPENAI_RESPONSES.answer("from backup"));
		this.upstreams.runner().run((context) -> assertThat(chat(context).attempts()).extracting(Attempt::outcome)
			.containsExactly(Outcome.RATE_LIMITED, Outcome.RATE_LIMITED, Outcome.RATE_LIMITED, Outcome.SUCCESS));
	}

	@Test
	void streamThatEndsWithoutALifecycleEndIsBrokenNotWhole() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.server("primary")
				.enqueue(sse(Wire.OPENAI_RESPONSES.streamStart() + Wire.OPENAI_RESPONSES.text("Half an answer") + "data: [DONE]\n\n"));
		}
		this.upstreams.server("backup").enqueue(sse(Wire.OPENAI_RESPONSES.stream("from", " backup")));
		this.upstreams.runner().run((context) -> StepVerifier
			.create(context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("Question?")))
			.expectNextCount(1)
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOfSatisfying(LlmStreamInterruptedException.class,
					(interrupted) -> {
						assertThat(interrupted.outcome()).isEqualTo(Outcome.STREAM_INTERRUPTED);
						assertThat(interrupted.partial()).isEqualTo("Half an answer");
						assertThat(interrupted.getMessage()).contains("response.completed");
					}))
			.verify(WAIT));
	}

	@Test
	void notFoundNamesTheResponsesUrlCalled() {
		this.upstreams.server("primary").enqueue(Wire.OPENAI_RESPONSES.error(404));
		this.upstreams.runner().run((context) -> StepVerifier
			.create(FakeUpstream.endpoint(context, "primary").chat(ChatRequest.ofUser("hello"), (attempt) -> {
			}))
			.expectErrorSatisfies((error) -> assertThat(error).hasMessageContaining("HTTP 404 from POST ")
				.hasMessageContaining("/v1/responses")
				.hasMessageContaining("Check that model 'primary-model' exists at this provider"))
			.verify(WAIT));
	}

	private static String compact(String json) {
		return mapper.readTree(json).toString();
	}

	private static List<ChatChunk> stream(AssertableApplicationContext context) {
		return context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("Hi")).collectList().block(WAIT);
	}

	private static String joined(List<ChatChunk> chunks) {
		return chunks.stream().map(ChatChunk::content).collect(Collectors.joining());
	}

}
