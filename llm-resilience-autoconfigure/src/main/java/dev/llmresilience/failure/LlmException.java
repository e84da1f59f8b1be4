package dev.llmresilience.failure;

import org.jspecify.annotations.Nullable;

/**
 * Root of every exception the starter raises for an LLM call. Messages never contain an API key
 * or a header value.
 */
public abstract sealed class LlmException extends RuntimeException
		permits LlmUpstreamException, LlmRequestException, LlmUnavailableException, LlmStreamInterruptedException {

	private final @Nullable String endpoint;

	LlmException(String message, @Nullable String endpoint, @Nullable Throwable cause) {
		super(message, cause);
		this.endpoint = endpoint;
	}

	/**
	 * The name of the endpoint the failure came from.
	 * @return the endpoint name, or {@code null} when no single endpoint is concerned
	 */
	public @Nullable String endpoint() {
		return this.endpoint;
	}

}
