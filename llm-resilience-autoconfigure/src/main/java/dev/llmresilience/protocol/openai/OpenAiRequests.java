package dev.llmresilience.protocol.openai;

import java.util.List;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.failure.LlmInvalidRequestException;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes a {@link ChatRequest} in the OpenAI chat-completions format: messages with content parts,
 * assistant tool calls and tool results, the tools and the tool choice.
 */
final class OpenAiRequests {

	private static final String FUNCTION = "function";

	private final JsonMapper mapper;

	OpenAiRequests(JsonMapper mapper) {
		this.mapper = mapper;
	}

	/**
	 * The wire request.
	 * @param request the request
	 * @param model the model to ask for, or {@code null} where the path names it (Azure)
	 * @param stream whether to stream
	 * @param streamUsage whether to ask a stream for its usage chunk ({@code stream_options})
	 * @return the body
	 * @throws LlmInvalidRequestException when a tool's parameters are not valid JSON
	 */
	OpenAiChatRequest toWire(ChatRequest request, @Nullable String model, boolean stream, boolean streamUsage) {
		List<OpenAiChatRequest.Message> messages = request.messages().stream().map(OpenAiRequests::message).toList();
		List<OpenAiChatRequest.Tool> tools = request.tools().isEmpty() ? null
				: request.tools().stream().map(this::tool).toList();
		Object toolChoice = toolChoice(request.toolChoice());
		// extra holds no field of the typed ones: ReservedFields refuses those before this is called
		return new OpenAiChatRequest(model, messages, request.temperature(), request.maxTokens(),
				stream ? Boolean.TRUE : null, streamUsage ? new OpenAiChatRequest.StreamOptions(true) : null, tools,
				toolChoice, request.extra());
	}

	static OpenAiChatRequest.Message message(ChatMessage message) {
		Object content = message.parts().isEmpty() ? message.content()
				: message.parts().stream().map(OpenAiRequests::part).toList();
		List<OpenAiChatCompletion.ToolCall> calls = message.toolCalls().isEmpty() ? null
				: message.toolCalls().stream().map(OpenAiRequests::toolCall).toList();
		// the API knows a name on the participants' messages only; on a tool result it is refused
		String name = ChatMessage.TOOL.equals(message.role()) ? null : message.name();
		return new OpenAiChatRequest.Message(message.role(), content, name, calls, message.toolCallId());
	}

	private static OpenAiChatRequest.Part part(ContentPart part) {
		if (part instanceof ContentPart.ImageUrl image) {
			return new OpenAiChatRequest.Part("image_url", null,
					new OpenAiChatRequest.ImageUrl(image.url(), image.detail()));
		}
		return new OpenAiChatRequest.Part("text", ((ContentPart.Text) part).text(), null);
	}

	static OpenAiChatCompletion.ToolCall toolCall(ToolCall call) {
		return new OpenAiChatCompletion.ToolCall(call.id(), FUNCTION,
				new OpenAiChatCompletion.Function(call.name(), call.arguments()));
	}

	OpenAiChatRequest.Tool tool(Tool tool) {
		return new OpenAiChatRequest.Tool(FUNCTION, new OpenAiChatRequest.FunctionDefinition(tool.name(),
				tool.description(), parameters(tool), tool.strict()));
	}

	private @Nullable JsonNode parameters(Tool tool) {
		if (tool.parameters() == null || tool.parameters().isBlank()) {
			return null;
		}
		try {
			JsonNode schema = this.mapper.readTree(tool.parameters());
			if (!schema.isObject()) {
				throw invalidSchema(tool);
			}
			return schema;
		}
		catch (JacksonException ex) {
			throw invalidSchema(tool);
		}
	}

	private static LlmInvalidRequestException invalidSchema(Tool tool) {
		return new LlmInvalidRequestException("The parameters of tool '" + tool.name()
				+ "' are not a JSON object; give its JSON Schema as JSON text, e.g. {\"type\":\"object\",\"properties\":{}}",
				null, 0, "invalid_tool_parameters");
	}

	static @Nullable Object toolChoice(@Nullable ToolChoice choice) {
		if (choice == null) {
			return null;
		}
		return switch (choice.mode()) {
			case AUTO -> "auto";
			case NONE -> "none";
			case REQUIRED -> "required";
			case FUNCTION -> new OpenAiChatRequest.NamedToolChoice(FUNCTION,
					new OpenAiChatRequest.FunctionName(choice.function()));
		};
	}

}
