package dev.llmresilience.springai;

import java.net.URI;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Locale;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import org.jspecify.annotations.Nullable;

import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.content.Media;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;
import org.springframework.util.MimeType;

/**
 * Spring AI's messages and tools in the project's terms and back: system, user (text and images),
 * assistant (text and tool calls) and tool-response messages, and function tools by their
 * definitions.
 */
final class SpringAiMessages {

	private static final String FUNCTION = "function";

	private static final MimeType ANY_IMAGE = MimeType.valueOf("image/*");

	private SpringAiMessages() {
	}

	/**
	 * A Spring AI conversation as the project's messages.
	 * @param messages the prompt's instructions
	 * @return the messages; a tool-response message becomes one tool result per response
	 * @throws IllegalArgumentException for a message of a kind the project has no counterpart for
	 */
	public static List<ChatMessage> fromSpringAi(List<Message> messages) {
		List<ChatMessage> result = new ArrayList<>();
		for (Message message : messages) {
			if (message instanceof SystemMessage system) {
				result.add(ChatMessage.system(text(system.getText())));
			}
			else if (message instanceof UserMessage user) {
				result.add(user(user));
			}
			else if (message instanceof AssistantMessage assistant) {
				List<ToolCall> calls = assistant.getToolCalls().stream()
					.map((call) -> new ToolCall(call.id(), call.name(), text(call.arguments())))
					.toList();
				result.add(calls.isEmpty() ? ChatMessage.assistant(text(assistant.getText()))
						: ChatMessage.assistant(assistant.getText(), calls));
			}
			else if (message instanceof ToolResponseMessage tool) {
				tool.getResponses().forEach((response) -> result
					.add(ChatMessage.tool(response.id(), response.name(), text(response.responseData()))));
			}
			else {
				throw new IllegalArgumentException("A " + message.getMessageType() + " message cannot be sent through the gateway");
			}
		}
		return result;
	}

	/**
	 * The project's messages as a Spring AI conversation: consecutive tool results become one
	 * tool-response message, as Spring AI sends them.
	 * @param messages the messages
	 * @return the prompt's instructions
	 */
	public static List<Message> toSpringAi(List<ChatMessage> messages) {
		List<Message> result = new ArrayList<>();
		List<ToolResponseMessage.ToolResponse> responses = new ArrayList<>();
		for (ChatMessage message : messages) {
			if (ChatMessage.TOOL.equals(message.role())) {
				responses.add(new ToolResponseMessage.ToolResponse(message.toolCallId(),
						(message.name() != null) ? message.name() : "", message.text()));
				continue;
			}
			flush(responses, result);
			result.add(switch (message.role()) {
				case ChatMessage.ASSISTANT -> AssistantMessage.builder()
					.content(message.content())
					.toolCalls(message.toolCalls().stream()
						.map((call) -> new AssistantMessage.ToolCall(call.id(), FUNCTION, call.name(), call.arguments()))
						.toList())
					.build();
				case ChatMessage.USER -> UserMessage.builder().text(message.text()).media(media(message.parts())).build();
				// system, developer and any other instruction role
				default -> new SystemMessage(message.text());
			});
		}
		flush(responses, result);
		return result;
	}

	/**
	 * Spring AI's tool definitions as the project's tools.
	 * @param definitions the definitions
	 * @return the tools
	 */
	public static List<Tool> tools(List<ToolDefinition> definitions) {
		return definitions.stream()
			.map((definition) -> new Tool(definition.name(), blankToNull(definition.description()),
					blankToNull(definition.inputSchema()), null))
			.toList();
	}

	/**
	 * The project's tools as Spring AI callbacks that only describe them: the model is told of the
	 * functions, and the caller of the gateway runs them.
	 * @param tools the tools
	 * @return the callbacks
	 */
	public static List<ToolCallback> callbacks(List<Tool> tools) {
		return tools.stream().map(SpringAiMessages::callback).toList();
	}

	private static ToolCallback callback(Tool tool) {
		ToolDefinition definition = ToolDefinition.builder()
			.name(tool.name())
			.description((tool.description() != null) ? tool.description() : "")
			.inputSchema((tool.parameters() != null) ? tool.parameters() : "{\"type\":\"object\",\"properties\":{}}")
			.build();
		return new ToolCallback() {

			@Override
			public ToolDefinition getToolDefinition() {
				return definition;
			}

			@Override
			public String call(String toolInput) {
				throw new UnsupportedOperationException("Tool '" + tool.name()
						+ "' is run by the gateway's caller, which gets the tool call in the answer");
			}

		};
	}

	private static void flush(List<ToolResponseMessage.ToolResponse> responses, List<Message> result) {
		if (!responses.isEmpty()) {
			result.add(ToolResponseMessage.builder().responses(List.copyOf(responses)).build());
			responses.clear();
		}
	}

	private static ChatMessage user(UserMessage user) {
		if (user.getMedia().isEmpty()) {
			return ChatMessage.user(text(user.getText()));
		}
		List<ContentPart> parts = new ArrayList<>();
		if (user.getText() != null && !user.getText().isEmpty()) {
			parts.add(ContentPart.text(user.getText()));
		}
		for (Media media : user.getMedia()) {
			parts.add(ContentPart.imageUrl(url(media)));
		}
		return ChatMessage.user(parts);
	}

	// A URL stays a URL; inline bytes travel as a data URL, as the OpenAI format carries them.
	private static String url(Media media) {
		Object data = media.getData();
		if (data instanceof byte[] bytes) {
			return "data:" + media.getMimeType() + ";base64," + Base64.getEncoder().encodeToString(bytes);
		}
		return String.valueOf(data);
	}

	private static List<Media> media(List<ContentPart> parts) {
		List<Media> media = new ArrayList<>();
		for (ContentPart part : parts) {
			if (part instanceof ContentPart.ImageUrl image) {
				media.add(Media.builder().mimeType(mimeType(image.url())).data(URI.create(image.url())).build());
			}
		}
		return media;
	}

	private static MimeType mimeType(String url) {
		if (url.startsWith("data:") && url.indexOf(';') > 5) {
			return MimeType.valueOf(url.substring(5, url.indexOf(';')));
		}
		String path = url.toLowerCase(Locale.ROOT);
		int query = path.indexOf('?');
		path = (query >= 0) ? path.substring(0, query) : path;
		if (path.endsWith(".png")) {
			return MimeType.valueOf("image/png");
		}
		if (path.endsWith(".jpg") || path.endsWith(".jpeg")) {
			return MimeType.valueOf("image/jpeg");
		}
		if (path.endsWith(".gif")) {
			return MimeType.valueOf("image/gif");
		}
		if (path.endsWith(".webp")) {
			return MimeType.valueOf("image/webp");
		}
		return ANY_IMAGE;
	}

	private static String text(@Nullable String text) {
		return (text != null) ? text : "";
	}

	private static @Nullable String blankToNull(@Nullable String text) {
		return (text == null || text.isBlank()) ? null : text;
	}

}
