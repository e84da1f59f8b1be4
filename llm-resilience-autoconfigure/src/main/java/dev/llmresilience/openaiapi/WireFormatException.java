package dev.llmresilience.openaiapi;

import org.jspecify.annotations.Nullable;

/**
 * A request body that is not a valid request of its wire format: not JSON, a field of the wrong
 * type, or a feature this project does not serve. The message says what to change.
 */
final class WireFormatException extends IllegalArgumentException {

	private final @Nullable String param;

	/**
	 * Create an instance.
	 * @param message what is wrong and what to do
	 * @param param the offending field's path, e.g. {@code messages[1].content}, or {@code null}
	 */
	public WireFormatException(String message, @Nullable String param) {
		super(message);
		this.param = param;
	}

	/**
	 * The offending field.
	 * @return its path, or {@code null} when the body as a whole is wrong
	 */
	public @Nullable String param() {
		return this.param;
	}

}
