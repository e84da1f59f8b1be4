package dev.llmresilience.protocol.anthropic;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.protocol.openai.ReservedFields;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.Wire;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * What an Anthropic server receives for the messages agents send, over real HTTP through the
 * auto-configuration: tool calls and results as content blocks in alternating turns, images, the
 * tool choice in Anthropic's terms, and what is refused before anything is sent.
 */
class AnthropicRequestMappingTests {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private static final Tool WEATHER = Tool.function("get_weather", "The weather in a city",
			"{\"type\": \"object\", \"properties\": {\"city\": {\"type\": \"string\"}}, \"required\": [\"city\"]}");

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
	void toolCallsAreToolUseBlocksAndTheirResultsWithTheNextUserTextOneUserTurn() throws Exception {
		ChatRequest request = ChatRequest.builder()
			.system("Be brief.")
			.user("Weather in Paris and Rome?")
			.message(ChatMessage.assistant("Let me check both.",
					List.of(new ToolCall("toolu_01A", "get_weather", "{\"city\": \"Paris\"}"),
							new ToolCall("toolu_01B", "get_weather", "{\"city\": \"Rome\"}"))))
			.toolResult("toolu_01A", "get_weather", "18°C, cloudy")
			.toolResult("toolu_01B", "get_weather", "22°C, sunny")
			.user("And tomorrow?")
			.tool(WEATHER)
			.build();
		JsonNode body = send(request).get(0);
		assertThat(body.get("system").asString()).isEqualTo("Be brief.");
		assertThat(body.get("messages")).isEqualTo(mapper.readTree("""
				[{"role": "user", "content": "Weather in Paris and Rome?"},
				 {"role": "assistant", "content": [
				  {"type": "text", "text": "Let me check both."},
				  {"type": "tool_use", "id": "toolu_01A", "name": "get_weather", "input": {"city": "Paris"}},
				  {"type": "tool_use", "id": "toolu_01B", "name": "get_weather", "input": {"city": "Rome"}}]},
				 {"role": "user", "content": [
				  {"type": "tool_result", "tool_use_id": "toolu_01A", "content": "18°C, cloudy"},
				  {"type": "tool_result", "tool_use_id": "toolu_01B", "content": "22°C, sunny"},
				  {"type": "text", "text": "And tomorrow?"}]}]"""));
		assertThat(body.get("tools")).isEqualTo(mapper.readTree("""
				[{"name": "get_weather", "description": "The weather in a city", "input_schema":
				  {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}]"""));
	}

	@Test
	void aCallWithoutArgumentsHasAnEmptyInputAndAnotherProvidersIdIsMadeOneAnthropicTakes() throws Exception {
		ChatRequest request = ChatRequest.builder()
			.user("What time is it?")
			.message(ChatMessage.assistant(null, List.of(new ToolCall("call:7/x", "now", ""))))
			.toolResult("call:7/x", "now", "12:00")
			.tool(Tool.function("now", null, null))
			.build();
		JsonNode body = send(request).get(0);
		assertThat(body.get("messages").get(1).get("content")).isEqualTo(mapper.readTree(
				"[{\"type\": \"tool_use\", \"id\": \"call_7_x\", \"name\": \"now\", \"input\": {}}]"));
		assertThat(body.get("messages").get(2).get("content")).isEqualTo(mapper.readTree(
				"[{\"type\": \"tool_result\", \"tool_use_id\": \"call_7_x\", \"content\": \"12:00\"}]"));
		assertThat(body.get("tools").get(0)).isEqualTo(mapper.readTree(
				"{\"name\": \"now\", \"input_schema\": {\"type\": \"object\", \"properties\": {}}}"));
	}

	@Test
	void imagePartsAreImageBlocksByUrlOrInlineAsBase64() throws Exception {
		ChatRequest request = ChatRequest.builder()
			.message(ChatMessage.user(List.of(ContentPart.text("What is in these images?"),
					ContentPart.imageUrl("https://example.com/cat.jpg"),
					new ContentPart.ImageUrl("data:image/png;base64,iVBORw0KGgo=", "high"))))
			.message(ChatMessage.assistant(null, List.of(new ToolCall("toolu_01C", "snapshot", "{}"))))
			.message(new ChatMessage(ChatMessage.TOOL, null,
					List.of(ContentPart.text("Taken."), ContentPart.imageUrl("data:image/jpeg;base64,/9j/4AAQ")),
					List.of(), "toolu_01C", "snapshot"))
			.tool(Tool.function("snapshot", "Takes a picture", null))
			.build();
		JsonNode messages = send(request).get(0).get("messages");
		assertThat(messages.get(0).get("content")).isEqualTo(mapper.readTree("""
				[{"type": "text", "text": "What is in these images?"},
				 {"type": "image", "source": {"type": "url", "url": "https://example.com/cat.jpg"}},
				 {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]"""));
		assertThat(messages.get(2).get("content")).isEqualTo(mapper.readTree("""
				[{"type": "tool_result", "tool_use_id": "toolu_01C", "content": [
				  {"type": "text", "text": "Taken."},
				  {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "/9j/4AAQ"}}]}]"""));
	}

	@Test
	void toolChoiceIsSentInAnthropicsTermsAndOnlyWithTools() throws Exception {
		Map<String, ChatRequest> requests = new LinkedHashMap<>();
		requests.put("{\"type\": \"auto\"}", withTools(ToolChoice.auto(), null));
		requests.put("{\"type\": \"none\"}", withTools(ToolChoice.none(), null));
		requests.put("{\"type\": \"any\"}", withTools(ToolChoice.required(), null));
		requests.put("{\"type\": \"tool\", \"name\": \"get_weather\"}", withTools(ToolChoice.function("get_weather"), null));
		requests.put("{\"type\": \"any\", \"disable_parallel_tool_use\": true}", withTools(ToolChoice.required(), false));
		requests.put("{\"type\": \"tool\", \"name\": \"get_weather\", \"disable_parallel_tool_use\": true}",
				withTools(ToolChoice.function("get_weather"), false));
		requests.put("{\"type\": \"auto\", \"disable_parallel_tool_use\": true}", withTools(null, false));
		requests.put("{\"type\": \"none\"} (no parallel flag on none)", withTools(ToolChoice.none(), false));
		List<JsonNode> bodies = send(requests.values().toArray(ChatRequest[]::new));
		List<String> expected = new ArrayList<>(requests.keySet());
		for (int i = 0; i < expected.size(); i++) {
			String json = expected.get(i).replace(" (no parallel flag on none)", "");
			assertThat(bodies.get(i).get("tool_choice")).as(expected.get(i)).isEqualTo(mapper.readTree(json));
			assertThat(bodies.get(i).has("parallel_tool_calls")).isFalse();
		}
		JsonNode noChoice = send(withTools(null, null)).get(0);
		assertThat(noChoice.has("tool_choice")).isFalse();
		JsonNode noTools = send(ChatRequest.builder().user("hi").toolChoice(ToolChoice.required())
			.extra("parallel_tool_calls", false).build()).get(0);
		assertThat(noTools.has("tools")).isFalse();
		assertThat(noTools.has("tool_choice")).isFalse();
	}

	@Test
	void typedFieldsWinOverExtraFieldsOfTheSameName() throws Exception {
		ChatRequest overridden = ChatRequest.builder()
			.system("From the messages.")
			.user("hi")
			.extra("system", "From extra.")
			.build();
		ChatRequest reserved = ChatRequest.builder().user("hi").extra("max_tokens ", 1).build();
		this.upstreams.server("primary").enqueue(Wire.ANTHROPIC.answer("ok"));
		this.upstreams.runner().run((context) -> {
			// Anthropic's own name beside the request's system messages: theirs is sent, once
			assertThat(chat(context, overridden).content()).isEqualTo("ok");
			// a field every protocol's request sets itself (ReservedFields): refused, nothing sent
			Throwable error = catchThrowable(() -> chat(context, reserved));
			assertThat(error).isInstanceOf(LlmInvalidRequestException.class);
			assertThat(((LlmInvalidRequestException) error).code()).isEqualTo(ReservedFields.ERROR_CODE);
		});
		assertThat(this.upstreams.server("primary").getRequestCount()).isOne();
		String sent = this.upstreams.server("primary").takeRequest().getBody().utf8();
		assertThat(mapper.readTree(sent).get("system").asString()).isEqualTo("From the messages.");
		assertThat(sent).doesNotContain("From extra.");
	}

	@Test
	void whatCannotBeSentIsTheCallersErrorAndNothingIsSent() {
		Map<String, ChatRequest> requests = new LinkedHashMap<>();
		requests.put(AnthropicTurns.INVALID_ARGUMENTS, afterCall(new ToolCall("toolu_01A", "get_weather", "{not json")));
		requests.put(AnthropicTurns.INVALID_ARGUMENTS + " (an array)",
				afterCall(new ToolCall("toolu_01A", "get_weather", "[\"Paris\"]")));
		requests.put(AnthropicTurns.INVALID_CALL, afterCall(new ToolCall(" ", "get_weather", "{}")));
		requests.put("invalid_tool_parameters",
				ChatRequest.builder().user("hi").tool(Tool.function("get_weather", null, "[\"city\"]")).build());
		requests.put(AnthropicTurns.INVALID_IMAGE, ChatRequest.builder()
			.message(ChatMessage.user(List.of(ContentPart.imageUrl("data:image/svg+xml,%3Csvg%3E%3C/svg%3E"))))
			.build());
		this.upstreams.runner().run((context) -> requests.forEach((code, request) -> {
			Throwable error = catchThrowable(() -> chat(context, request));
			assertThat(error).as(code).isInstanceOf(LlmInvalidRequestException.class);
			assertThat(((LlmInvalidRequestException) error).code()).as(code).isEqualTo(code.replaceAll(" \\(.*", ""));
			assertThat(BreakerCalls.of(context, "primary")).as(code).isEqualTo(BreakerCalls.NONE);
		}));
		assertThat(this.upstreams.server("primary").getRequestCount()).isZero();
		assertThat(this.upstreams.server("backup").getRequestCount()).isZero();
		// a tool result with no id cannot be made at all
		assertThat(catchThrowable(() -> ChatMessage.tool(" ", "get_weather", "18°C")))
			.isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("toolCallId");
	}

	private static ChatRequest withTools(@Nullable ToolChoice choice, @Nullable Boolean parallelToolCalls) {
		ChatRequest.Builder builder = ChatRequest.builder().user("Weather in Paris?").tool(WEATHER).toolChoice(choice);
		if (parallelToolCalls != null) {
			builder.extra("parallel_tool_calls", parallelToolCalls);
		}
		return builder.build();
	}

	private static ChatRequest afterCall(ToolCall call) {
		return ChatRequest.builder()
			.user("Weather in Paris?")
			.message(ChatMessage.assistant(null, List.of(call)))
			.toolResult("toolu_01A", "get_weather", "18°C")
			.tool(WEATHER)
			.build();
	}

	// Each request answered "ok" by the primary; the bodies it received, in order.
	private List<JsonNode> send(ChatRequest... requests) throws InterruptedException {
		for (int i = 0; i < requests.length; i++) {
			this.upstreams.server("primary").enqueue(Wire.ANTHROPIC.answer("ok"));
		}
		this.upstreams.runner().run((context) -> {
			for (ChatRequest request : requests) {
				assertThat(chat(context, request).content()).isEqualTo("ok");
			}
		});
		List<JsonNode> bodies = new ArrayList<>();
		for (int i = 0; i < requests.length; i++) {
			bodies.add(AnthropicSessions.body(this.upstreams.server("primary").takeRequest()));
		}
		return bodies;
	}

}
