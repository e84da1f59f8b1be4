package dev.llmresilience.failure;

import dev.llmresilience.chat.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * The prompt (messages plus requested completion) is longer than the model's context window.
 * Shorten the conversation or lower {@code maxTokens}.
 */
public final class LlmContextLengthExceededException extends LlmRequestException {

	/**
	 * Create an instance.
	 * @param message the provider's message
	 * @param endpoint the endpoint that refused it
	 * @param status the HTTP status
	 * @param code the provider's error code
	 */
	public LlmContextLengthExceededException(String message, @Nullable String endpoint, int status,
			@Nullable String code) {
		super(message, endpoint, status, code);
	}

	@Override
	public Outcome outcome() {
		return Outcome.CONTEXT_LENGTH_EXCEEDED;
	}

}
