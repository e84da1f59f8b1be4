package dev.llmresilience.failure;

import dev.llmresilience.chat.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * The provider refused the request as invalid (HTTP 400, 413 or 422), or the request names a route
 * that is not configured. Fix the request; retrying it unchanged cannot help.
 */
public final class LlmInvalidRequestException extends LlmRequestException {

	/**
	 * Create an instance.
	 * @param message what is wrong, as the provider said it
	 * @param endpoint the endpoint that refused it, or {@code null} when refused before sending
	 * @param status the HTTP status, or 0
	 * @param code the provider's error code, or {@code null}
	 */
	public LlmInvalidRequestException(String message, @Nullable String endpoint, int status, @Nullable String code) {
		super(message, endpoint, status, code);
	}

	@Override
	public Outcome outcome() {
		return Outcome.INVALID_REQUEST;
	}

}
