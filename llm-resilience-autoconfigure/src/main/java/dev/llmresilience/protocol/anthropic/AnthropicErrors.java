package dev.llmresilience.protocol.anthropic;

import java.util.List;
import java.util.Locale;

import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmUpstreamException.ProviderError;
import dev.llmresilience.protocol.Redaction;
import dev.llmresilience.protocol.UpstreamFailures;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * Anthropic's errors in the project's failure rules. An error status is classified as it is (529
 * {@code overloaded_error} is a server error: retried and counted). An error sent inside a 200
 * stream ({@code event: error}) has no status of its own, so it is classified as the status its
 * type stands for in Anthropic's error table. A prompt too long for the model is Anthropic's
 * {@code invalid_request_error}, told apart by its message, and becomes the project's
 * {@code context_length_exceeded}.
 */
final class AnthropicErrors {

	private static final String CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded";

	private final String endpoint;

	private final UpstreamFailures failures;

	private final List<String> secrets;

	AnthropicErrors(String endpoint, UpstreamFailures failures, List<String> secrets) {
		this.endpoint = endpoint;
		this.failures = failures;
		this.secrets = secrets;
	}

	/**
	 * Classify an error response.
	 * @param status the HTTP status
	 * @param headers the response headers ({@code retry-after})
	 * @param error the body's error, or {@code null} when the body had none that could be read
	 * @return the failure
	 */
	LlmException classify(int status, HttpHeaders headers, AnthropicMessage.@Nullable Error error) {
		return this.failures.classifyStatus(this.endpoint, status, headers, (error != null) ? providerError(error) : null);
	}

	/**
	 * Classify an error the provider sent on HTTP 200: an error body, or an {@code error} event of a
	 * stream.
	 * @param error the error, or {@code null} when the event had none that could be read
	 * @return the failure
	 */
	LlmException classifyInBand(AnthropicMessage.@Nullable Error error) {
		return classify(statusOf((error != null) ? error.type() : null), HttpHeaders.EMPTY, error);
	}

	/**
	 * The status Anthropic's error table gives an error type; an unknown type counts as a server error.
	 * @param type the error's type
	 * @return the status
	 */
	static int statusOf(@Nullable String type) {
		if (type == null) {
			return 500;
		}
		return switch (type) {
			case "invalid_request_error" -> 400;
			case "authentication_error" -> 401;
			case "billing_error" -> 402;
			case "permission_error" -> 403;
			case "not_found_error" -> 404;
			case "request_too_large" -> 413;
			case "rate_limit_error" -> 429;
			case "timeout_error" -> 504;
			case "overloaded_error" -> 529;
			default -> 500;
		};
	}

	ProviderError providerError(AnthropicMessage.Error error) {
		return new ProviderError(Redaction.redactAndCut(error.type(), this.secrets),
				isContextLength(error) ? CONTEXT_LENGTH_EXCEEDED : null, Redaction.redactAndCut(error.message(), this.secrets));
	}

	// "prompt is too long: 208310 tokens > 200000 maximum", or "input length and `max_tokens` exceed
	// context limit: 197202 + 21333 > 200000, decrease input length or `max_tokens` and try again"
	private static boolean isContextLength(AnthropicMessage.Error error) {
		if (!"invalid_request_error".equals(error.type()) || error.message() == null) {
			return false;
		}
		String message = error.message().toLowerCase(Locale.ROOT);
		return message.contains("prompt is too long") || message.contains("exceed context limit");
	}

}
