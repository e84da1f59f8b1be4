package dev.llmresilience.protocol.openai;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.protocol.openai.OpenAiResponsesWire.InputItem;
import dev.llmresilience.protocol.openai.OpenAiResponsesWire.Part;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Writes a {@link ChatRequest} in the terms of OpenAI's Responses API: each message an input item in
 * its place (system and developer messages too, as {@code system}/{@code developer} messages, so that
 * their order against the conversation is kept), an assistant's tool calls as {@code function_call}
 * items after its text, each tool result as a {@code function_call_output}, the tools flat, and
 * {@code store: false}. A tool's parameters are checked as for chat completions.
 */
final class OpenAiResponsesRequests {

	private static final String FUNCTION = "function";

	private final JsonMapper mapper;

	private final OpenAiRequests chat;

	OpenAiResponsesRequests(JsonMapper mapper) {
		this.mapper = mapper;
		this.chat = new OpenAiRequests(mapper);
	}

	/**
	 * Refuse a request whose extra fields set a field this client writes, before any call.
	 * @param request the request
	 * @throws LlmInvalidRequestException naming the field
	 */
	static void check(ChatRequest request) {
		ReservedFields.checkResponses(request);
	}

	/**
	 * The wire request.
	 * @param request the request
	 * @param model the model to ask for
	 * @param stream whether to stream
	 * @return the body
	 * @throws LlmInvalidRequestException when a tool's parameters are not valid JSON
	 */
	OpenAiResponsesWire.Request toWire(ChatRequest request, String model, boolean stream) {
		check(request);
		List<InputItem> input = new ArrayList<>();
		for (ChatMessage message : request.messages()) {
			add(input, message);
		}
		List<OpenAiResponsesWire.Tool> tools = request.tools().isEmpty() ? null
				: request.tools().stream().map(this::tool).toList();
		return new OpenAiResponsesWire.Request(model, input, request.temperature(), request.maxTokens(),
				stream ? Boolean.TRUE : null, false, tools, toolChoice(request.toolChoice()), request.extra());
	}

	private static void add(List<InputItem> input, ChatMessage message) {
		if (ChatMessage.TOOL.equals(message.role())) {
			input.add(InputItem.functionCallOutput(String.valueOf(message.toolCallId()), text(message)));
			return;
		}
		if (ChatMessage.ASSISTANT.equals(message.role())) {
			// the Responses API takes an assistant's earlier text as a plain string; its calls follow it
			String text = text(message);
			if (!text.isEmpty() || message.toolCalls().isEmpty()) {
				input.add(InputItem.message(ChatMessage.ASSISTANT, text));
			}
			message.toolCalls()
				.forEach((call) -> input.add(InputItem.functionCall(call.id(), call.name(), call.arguments())));
			return;
		}
		Object content = message.parts().isEmpty() ? String.valueOf(message.content())
				: message.parts().stream().map(OpenAiResponsesRequests::part).toList();
		input.add(InputItem.message(message.role(), content));
	}

	private static String text(ChatMessage message) {
		if (message.parts().isEmpty()) {
			return (message.content() != null) ? message.content() : "";
		}
		return message.parts()
			.stream()
			.filter(ContentPart.Text.class::isInstance)
			.map((part) -> ((ContentPart.Text) part).text())
			.collect(Collectors.joining());
	}

	private static Part part(ContentPart part) {
		if (part instanceof ContentPart.ImageUrl image) {
			return new Part("input_image", null, image.url(), (image.detail() != null) ? image.detail() : "auto");
		}
		return new Part("input_text", ((ContentPart.Text) part).text(), null, null);
	}

	// strict is sent false unless asked: the Responses API's default (true) would refuse most
	// schemas written for chat completions, whose default is false.
	private OpenAiResponsesWire.Tool tool(Tool tool) {
		OpenAiChatRequest.FunctionDefinition function = this.chat.tool(tool).function();
		JsonNode parameters = (function.parameters() != null) ? function.parameters() : emptySchema();
		return new OpenAiResponsesWire.Tool(FUNCTION, tool.name(), tool.description(), parameters,
				Boolean.TRUE.equals(tool.strict()));
	}

	private ObjectNode emptySchema() {
		ObjectNode schema = this.mapper.createObjectNode();
		schema.put("type", "object");
		schema.putObject("properties");
		return schema;
	}

	private static @Nullable Object toolChoice(@Nullable ToolChoice choice) {
		if (choice != null && choice.mode() == ToolChoice.Mode.FUNCTION) {
			return new OpenAiResponsesWire.NamedToolChoice(FUNCTION, String.valueOf(choice.function()));
		}
		return OpenAiRequests.toolChoice(choice);
	}

}
