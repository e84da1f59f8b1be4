package dev.llmresilience.chat;

import java.util.Objects;

/**
 * One message of a conversation.
 *
 * @param role {@code system}, {@code user}, {@code assistant} or {@code tool}
 * @param content the text
 */
public record ChatMessage(String role, String content) {

	public ChatMessage {
		Objects.requireNonNull(role, "role must not be null");
		Objects.requireNonNull(content, "content must not be null");
	}

	/**
	 * A system message.
	 * @param content the text
	 * @return the message
	 */
	public static ChatMessage system(String content) {
		return new ChatMessage("system", content);
	}

	/**
	 * A user message.
	 * @param content the text
	 * @return the message
	 */
	public static ChatMessage user(String content) {
		return new ChatMessage("user", content);
	}

	/**
	 * An assistant message.
	 * @param content the text
	 * @return the message
	 */
	public static ChatMessage assistant(String content) {
		return new ChatMessage("assistant", content);
	}

}
