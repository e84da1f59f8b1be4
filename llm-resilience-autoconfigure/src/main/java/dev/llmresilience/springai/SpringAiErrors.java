package dev.llmresilience.springai;

import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmRequestException;

import org.springframework.ai.retry.NonTransientAiException;
import org.springframework.ai.retry.TransientAiException;
import org.springframework.util.ClassUtils;

/**
 * The gateway's failures as Spring AI's: a caller's error (invalid request, prompt too long) is a
 * {@link NonTransientAiException}; nothing able to answer now, or a stream that broke, is a
 * {@link TransientAiException}, which Spring AI's retry and its users treat as worth another try.
 * Without {@code spring-ai-retry} on the class path the gateway's own exceptions pass unchanged.
 */
final class SpringAiErrors {

	private static final boolean RETRY_TYPES = ClassUtils.isPresent("org.springframework.ai.retry.TransientAiException",
			SpringAiErrors.class.getClassLoader());

	private SpringAiErrors() {
	}

	static Throwable translate(Throwable error) {
		if (!RETRY_TYPES || !(error instanceof LlmException)) {
			return error;
		}
		return Translated.of((LlmException) error);
	}

	static RuntimeException busy(String message) {
		return RETRY_TYPES ? Translated.busy(message) : new IllegalStateException(message);
	}

	static RuntimeException unchecked(Throwable error) {
		return (error instanceof RuntimeException runtime) ? runtime : new IllegalStateException(error);
	}

	// Touches Spring AI's retry types only when they are on the class path.
	private static final class Translated {

		static RuntimeException of(LlmException error) {
			String message = error.getMessage();
			return (error instanceof LlmRequestException) ? new NonTransientAiException(message, error)
					: new TransientAiException(message, error);
		}

		static RuntimeException busy(String message) {
			return new TransientAiException(message);
		}

	}

}
