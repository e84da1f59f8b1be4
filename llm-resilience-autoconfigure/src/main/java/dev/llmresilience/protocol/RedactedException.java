package dev.llmresilience.protocol;

import dev.llmresilience.failure.LlmException;
import org.jspecify.annotations.Nullable;

/**
 * Stands in, as the cause of an {@link LlmException}, for an error whose message may hold text from
 * outside: it keeps the original's class name and stack trace, and its message redacted and cut
 * (see {@link Redaction#sanitized}). Its {@code toString()} reads like the original's.
 */
final class RedactedException extends RuntimeException {

	private final String type;

	RedactedException(String type, @Nullable String message, @Nullable RedactedException cause) {
		super(message, cause, false, true);
		this.type = type;
	}

	/**
	 * The class name of the error this stands for.
	 * @return the fully qualified class name
	 */
	public String type() {
		return this.type;
	}

	@Override
	public String toString() {
		String message = getMessage();
		return (message != null) ? this.type + ": " + message : this.type;
	}

}
