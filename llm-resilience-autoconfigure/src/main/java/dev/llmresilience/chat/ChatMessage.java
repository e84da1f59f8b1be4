package dev.llmresilience.chat;

import java.io.Serializable;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

/**
 * One message of a conversation: text, or content parts (text and images), or, for an assistant,
 * the tool calls it asked for; a {@code tool} message answers one of those calls by its id.
 *
 * @param role {@code system}, {@code developer}, {@code user}, {@code assistant} or {@code tool}
 * @param content the text, or {@code null} when the message has {@code parts} instead, or is an
 * assistant message with only tool calls
 * @param parts the content as parts (text and image URLs); empty when {@code content} carries it
 * @param toolCalls for an assistant message, the functions it called; else empty
 * @param toolCallId for a {@code tool} message, the id of the call it answers; else {@code null}
 * @param name for a {@code tool} message, the function's name (sent to providers that want it);
 * for the other roles an optional participant name; else {@code null}
 */
public record ChatMessage(String role, @Nullable String content, List<ContentPart> parts, List<ToolCall> toolCalls,
		@Nullable String toolCallId, @Nullable String name) implements Serializable {

	/** The role of a system message. */
	public static final String SYSTEM = "system";

	/** The role of a user message. */
	public static final String USER = "user";

	/** The role of an assistant (model) message. */
	public static final String ASSISTANT = "assistant";

	/** The role of a tool result. */
	public static final String TOOL = "tool";

	public ChatMessage {
		Objects.requireNonNull(role, "role must not be null");
		parts = (parts != null) ? List.copyOf(parts) : List.of();
		toolCalls = (toolCalls != null) ? List.copyOf(toolCalls) : List.of();
		if (content != null && !parts.isEmpty()) {
			throw new IllegalArgumentException("A message has either content or parts, not both");
		}
		if (content == null && parts.isEmpty() && toolCalls.isEmpty()) {
			throw new IllegalArgumentException("A '" + role + "' message needs content, parts or (assistant) tool calls");
		}
		if (!toolCalls.isEmpty() && !ASSISTANT.equals(role)) {
			throw new IllegalArgumentException("Only an assistant message carries tool calls, not a '" + role + "' one");
		}
		if (TOOL.equals(role) && (toolCallId == null || toolCallId.isBlank())) {
			throw new IllegalArgumentException("A tool message needs the toolCallId of the call it answers");
		}
	}

	/**
	 * A text message.
	 * @param role the role
	 * @param content the text
	 */
	public ChatMessage(String role, String content) {
		this(role, Objects.requireNonNull(content, "content must not be null"), List.of(), List.of(), null, null);
	}

	/**
	 * A system message.
	 * @param content the text
	 * @return the message
	 */
	public static ChatMessage system(String content) {
		return new ChatMessage(SYSTEM, content);
	}

	/**
	 * A user message.
	 * @param content the text
	 * @return the message
	 */
	public static ChatMessage user(String content) {
		return new ChatMessage(USER, content);
	}

	/**
	 * A user message of several parts, e.g. a question and an image.
	 * @param parts the parts, at least one
	 * @return the message
	 */
	public static ChatMessage user(List<ContentPart> parts) {
		return new ChatMessage(USER, null, parts, List.of(), null, null);
	}

	/**
	 * An assistant message.
	 * @param content the text
	 * @return the message
	 */
	public static ChatMessage assistant(String content) {
		return new ChatMessage(ASSISTANT, content);
	}

	/**
	 * An assistant message that called tools, to send back in the conversation before the results.
	 * @param content the text the model wrote besides the calls, or {@code null}
	 * @param toolCalls the calls
	 * @return the message
	 */
	public static ChatMessage assistant(@Nullable String content, List<ToolCall> toolCalls) {
		return new ChatMessage(ASSISTANT, (content != null && content.isEmpty() && !toolCalls.isEmpty()) ? null : content,
				List.of(), toolCalls, null, null);
	}

	/**
	 * The result of a tool call.
	 * @param toolCallId the id of the call ({@link ToolCall#id()})
	 * @param name the function's name ({@link ToolCall#name()})
	 * @param content the result, usually JSON
	 * @return the message
	 */
	public static ChatMessage tool(String toolCallId, String name, String content) {
		return new ChatMessage(TOOL, Objects.requireNonNull(content, "content must not be null"), List.of(), List.of(),
				toolCallId, name);
	}

	/**
	 * The message's text: its content, or its text parts joined.
	 * @return the text, empty for an assistant message with only tool calls
	 */
	public String text() {
		if (this.content != null) {
			return this.content;
		}
		return this.parts.stream()
			.filter(ContentPart.Text.class::isInstance)
			.map((part) -> ((ContentPart.Text) part).text())
			.collect(Collectors.joining());
	}

}
