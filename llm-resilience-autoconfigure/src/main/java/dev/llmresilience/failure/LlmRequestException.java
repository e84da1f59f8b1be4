package dev.llmresilience.failure;

import dev.llmresilience.chat.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * The caller's own request was refused (HTTP 400 family): another attempt or another endpoint
 * would refuse it too, so it is neither retried nor sent elsewhere, and no circuit breaker counts
 * it. Catch the subtypes to tell an invalid request from a prompt that is too long.
 */
public abstract sealed class LlmRequestException extends LlmException
		permits LlmInvalidRequestException, LlmContextLengthExceededException {

	private final int status;

	private final @Nullable String code;

	LlmRequestException(String message, @Nullable String endpoint, int status, @Nullable String code) {
		super(message, endpoint, null);
		this.status = status;
		this.code = code;
	}

	/**
	 * The HTTP status the provider answered with.
	 * @return the status, or 0 when the request was refused before it was sent
	 */
	public int status() {
		return this.status;
	}

	/**
	 * The provider's error code, e.g. {@code invalid_request_error} or {@code context_length_exceeded}.
	 * @return the code, or {@code null} when the provider gave none
	 */
	public @Nullable String code() {
		return this.code;
	}

	/**
	 * The outcome this exception stands for.
	 * @return {@link Outcome#INVALID_REQUEST} or {@link Outcome#CONTEXT_LENGTH_EXCEEDED}
	 */
	public abstract Outcome outcome();

}
