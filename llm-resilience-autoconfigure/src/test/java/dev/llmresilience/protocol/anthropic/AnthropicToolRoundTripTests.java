package dev.llmresilience.protocol.anthropic;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.Wire;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An agent's tool round trip against an Anthropic-speaking server: the first request offers a tool,
 * the answer calls it, the second request sends the call back with its result. The server serves
 * the Anthropic SDK's recorded sessions (anthropic-sdk-python's tool-runner recordings, which hold
 * the requests the SDK sent too), so each request is compared with the body the SDK sent to the
 * real API; in chat, in stream, and with chat sent upstream as a stream. Then a route whose OpenAI
 * primary fails sends the same kind of round trip to its Anthropic backup.
 */
class AnthropicToolRoundTripTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private static final String QUESTION = "What is the weather in SF?";

	// What the SDK's tool returned, as it sent it: JSON text, the degree sign escaped by Python's json.dumps.
	private static final String RESULT = "{\"location\": \"San Francisco, CA\", \"temperature\": \"68\\u00b0F\", "
			+ "\"condition\": \"Sunny\"}";

	private FakeUpstream upstreams;

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void recordedToolRoundTripSendsWhatTheSdkSentAndReadsBothAnswers() throws Exception {
		this.upstreams = FakeUpstream.start(Wire.ANTHROPIC);
		JsonNode session = AnthropicSessions.read("anthropic/sdkpy-recorded-tool-round-trip-nonstreaming.json");
		AnthropicSessions.serve(session, this.upstreams.server("primary"));
		ChatRequest ask = question(session);
		runner().withPropertyValues("llm.endpoints.primary.upstream-streaming=false").run((context) -> {
			ChatResponse first = chat(context, ask);
			assertThat(first.finishReason()).isEqualTo("tool_calls");
			assertThat(first.content()).isEmpty();
			assertThat(first.toolCalls()).containsExactly(new ToolCall("toolu_011bpynHqFZ9P4u5rSaXsTJQ", "get_weather",
					"{\"location\":\"San Francisco, CA\",\"units\":\"f\"}"));
			ChatResponse second = chat(context, ask.toBuilder()
				.message(first.toMessage())
				.toolResult(first.toolCalls().get(0).id(), "get_weather", RESULT)
				.build());
			assertThat(second.content())
				.isEqualTo("The weather in San Francisco, CA is currently **Sunny** with a temperature of **68°F**.");
			assertThat(second.finishReason()).isEqualTo("stop");
			assertThat(second.usage()).isEqualTo(new Usage(770, 25));
		});
		assertThat(sent()).isEqualTo(AnthropicSessions.sentBySdk(session, 0));
		assertThat(sent()).isEqualTo(AnthropicSessions.sentBySdk(session, 1));
	}

	@Test
	void recordedStreamedToolRoundTripAssemblesTheToolUseDeltasAndSendsWhatTheSdkSent() throws Exception {
		this.upstreams = FakeUpstream.start(Wire.ANTHROPIC);
		JsonNode session = AnthropicSessions.read("anthropic/sdkpy-recorded-tool-round-trip-streaming.json");
		AnthropicSessions.serve(session, this.upstreams.server("primary"));
		ChatRequest ask = question(session);
		runner().run((context) -> {
			List<ChatChunk> first = stream(context, ask);
			List<ToolCall> calls = toolCalls(first);
			// the input_json_delta pieces joined, as the API streamed them
			assertThat(calls).containsExactly(new ToolCall("toolu_01TJoxvFknVdnV9XpWFPaRmY", "get_weather",
					"{\"location\": \"San Francisco, CA\", \"units\": \"f\"}"));
			assertThat(first.get(first.size() - 1).finishReason()).isEqualTo("tool_calls");
			assertThat(first).extracting(ChatChunk::tier).containsOnly(Tier.PRIMARY);
			List<ChatChunk> second = stream(context, ask.toBuilder()
				.message(ChatMessage.assistant(text(first), calls))
				.toolResult(calls.get(0).id(), "get_weather", RESULT)
				.build());
			assertThat(text(second)).isEqualTo("The weather in San Francisco, CA is currently **68°F and Sunny**. "
					+ "It's a nice day!");
			assertThat(second.get(second.size() - 1).usage()).isEqualTo(new Usage(770, 27));
		});
		assertThat(sent()).isEqualTo(AnthropicSessions.sentBySdk(session, 0));
		assertThat(sent()).isEqualTo(AnthropicSessions.sentBySdk(session, 1));
	}

	@Test
	void chatSentUpstreamAsAStreamAssemblesTheRecordedToolUseAndSendsItBack() throws Exception {
		this.upstreams = FakeUpstream.start(Wire.ANTHROPIC);
		JsonNode session = AnthropicSessions.read("anthropic/sdkpy-recorded-tool-round-trip-streaming.json");
		AnthropicSessions.serve(session, this.upstreams.server("primary"));
		ChatRequest ask = question(session);
		runner().run((context) -> {
			ChatResponse first = chat(context, ask);
			assertThat(first.finishReason()).isEqualTo("tool_calls");
			assertThat(first.toolCalls()).containsExactly(new ToolCall("toolu_01TJoxvFknVdnV9XpWFPaRmY", "get_weather",
					"{\"location\": \"San Francisco, CA\", \"units\": \"f\"}"));
			ChatResponse second = chat(context,
					ask.toBuilder().message(first.toMessage()).toolResult(first.toolCalls().get(0).id(), "get_weather", RESULT).build());
			assertThat(second.content()).endsWith("It's a nice day!");
		});
		assertThat(sent()).isEqualTo(AnthropicSessions.sentBySdk(session, 0));
		assertThat(sent()).isEqualTo(AnthropicSessions.sentBySdk(session, 1));
	}

	@Test
	void openAiPrimaryFailsAndTheAnthropicBackupReceivesTheToolRoundTrip() throws Exception {
		Map<String, Wire> endpoints = new LinkedHashMap<>();
		endpoints.put("openai", Wire.OPENAI);
		endpoints.put("anthropic", Wire.ANTHROPIC);
		this.upstreams = FakeUpstream.start(endpoints);
		// openai-dotnet's recorded answer: two calls of one tool, OpenAI's ids
		JsonNode entries = mapper.readTree(fixture("openai/dotnet-record-parallel-tool-calls.json")).get("Entries");
		this.upstreams.server("openai").enqueue(json(200, mapper.writeValueAsString(entries.get(0).get("ResponseBody"))));
		for (int i = 0; i < 3; i++) {
			this.upstreams.server("openai").enqueue(Wire.OPENAI.error(500));
		}
		this.upstreams.server("anthropic").enqueue(Wire.ANTHROPIC.answer("Santiago is rainy, Karachi is sunny."));
		Tool weather = Tool.function("get_weather_for_city", "gets the current weather for a given city", """
				{"type": "object", "properties": {"city_name": {"type": "string",
				 "description": "the name of a city, e.g. Johannesburg or Ho Chi Minh City."}}, "required": ["city_name"]}""");
		ChatRequest ask = ChatRequest.builder()
			.user("Tell me what's the current weather in the following cities: Santiago and Karachi.")
			.tool(weather)
			.build();
		this.upstreams.runner().run((context) -> {
			ChatResponse first = chat(context, ask);
			assertThat(first.endpoint()).isEqualTo("openai");
			assertThat(first.toolCalls()).extracting(ToolCall::id)
				.containsExactly("call_SKQEHo7QVlJRoCtEzcrYZM9C", "call_CkjljlLr7IebPc4hnvetfiZ8");
			ChatResponse second = chat(context, ask.toBuilder()
				.message(first.toMessage())
				.toolResult(first.toolCalls().get(0).id(), "get_weather_for_city", "rainy")
				.toolResult(first.toolCalls().get(1).id(), "get_weather_for_city", "sunny")
				.build());
			assertThat(second.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(second.endpoint()).isEqualTo("anthropic");
			assertThat(second.content()).isEqualTo("Santiago is rainy, Karachi is sunny.");
			assertThat(second.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SERVER_ERROR,
					Outcome.SERVER_ERROR, Outcome.SERVER_ERROR, Outcome.SUCCESS);
		});
		assertThat(this.upstreams.server("openai").getRequestCount()).isEqualTo(4);
		assertThat(this.upstreams.server("anthropic").getRequestCount()).isOne();
		JsonNode received = AnthropicSessions.body(this.upstreams.server("anthropic").takeRequest());
		assertThat(received).isEqualTo(mapper.readTree("""
				{"model": "anthropic-model", "max_tokens": 4096, "stream": true,
				 "messages": [
				  {"role": "user", "content": "Tell me what's the current weather in the following cities: Santiago and Karachi."},
				  {"role": "assistant", "content": [
				   {"type": "tool_use", "id": "call_SKQEHo7QVlJRoCtEzcrYZM9C", "name": "get_weather_for_city",
				    "input": {"city_name": "Santiago"}},
				   {"type": "tool_use", "id": "call_CkjljlLr7IebPc4hnvetfiZ8", "name": "get_weather_for_city",
				    "input": {"city_name": "Karachi"}}]},
				  {"role": "user", "content": [
				   {"type": "tool_result", "tool_use_id": "call_SKQEHo7QVlJRoCtEzcrYZM9C", "content": "rainy"},
				   {"type": "tool_result", "tool_use_id": "call_CkjljlLr7IebPc4hnvetfiZ8", "content": "sunny"}]}],
				 "tools": [{"name": "get_weather_for_city", "description": "gets the current weather for a given city",
				  "input_schema": {"type": "object", "properties": {"city_name": {"type": "string",
				   "description": "the name of a city, e.g. Johannesburg or Ho Chi Minh City."}}, "required": ["city_name"]}}]}
				"""));
	}

	// The SDK's first request: the question, max_tokens 1024 and its one tool, on model claude-haiku-4-5.
	private static ChatRequest question(JsonNode session) {
		JsonNode tool = session.get(0).get("request").get("body").get("tools").get(0);
		return ChatRequest.builder()
			.user(QUESTION)
			.maxTokens(1024)
			.tool(Tool.function("get_weather", "Lookup the weather for a given city in either celsius or fahrenheit",
					mapper.writeValueAsString(tool.get("input_schema"))))
			.build();
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.runner().withPropertyValues("llm.endpoints.primary.model=claude-haiku-4-5");
	}

	private JsonNode sent() throws InterruptedException {
		return AnthropicSessions.body(this.upstreams.server("primary").takeRequest());
	}

	private static List<ChatChunk> stream(ApplicationContext context, ChatRequest request) {
		return context.getBean(LlmGateway.class).stream(request).collectList().block(WAIT);
	}

	private static String text(List<ChatChunk> chunks) {
		return chunks.stream().map(ChatChunk::content).reduce("", String::concat);
	}

	// What a streaming caller does with the pieces: join them by index, the first with the id and name.
	private static List<ToolCall> toolCalls(List<ChatChunk> chunks) {
		Map<Integer, String[]> calls = new TreeMap<>();
		for (ChatChunk chunk : chunks) {
			for (ToolCallDelta piece : chunk.toolCalls()) {
				String[] call = calls.computeIfAbsent(piece.index(), (index) -> new String[] { null, null, "" });
				call[0] = (piece.id() != null) ? piece.id() : call[0];
				call[1] = (piece.name() != null) ? piece.name() : call[1];
				call[2] = call[2] + piece.arguments();
			}
		}
		return calls.values().stream().map((call) -> new ToolCall(call[0], call[1], call[2])).toList();
	}

}
