package dev.llmresilience.failure;

import java.time.Duration;

import dev.llmresilience.chat.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * A provider failed to answer one attempt: a status the provider is to blame for, a transport
 * failure, a timeout, an unusable body, or a content-filter block. The gateway handles these
 * (retry, fall back, degrade); callers only see them inside a {@code ChatResponse}'s attempts or an
 * {@link LlmUnavailableException}.
 */
public final class LlmUpstreamException extends LlmException {

	private final Outcome outcome;

	private final int status;

	private final @Nullable Duration retryAfter;

	private final @Nullable String noRetry;

	/**
	 * Create an instance.
	 * @param endpoint the endpoint's name
	 * @param outcome how the attempt is classified
	 * @param status the HTTP status, or 0 when no response arrived
	 * @param retryAfter the wait the provider asked for (429), or {@code null}
	 * @param message what happened, without secrets
	 * @param cause the underlying error, or {@code null}
	 */
	public LlmUpstreamException(String endpoint, Outcome outcome, int status, @Nullable Duration retryAfter,
			String message, @Nullable Throwable cause) {
		this(endpoint, outcome, status, retryAfter, message, cause, null);
	}

	private LlmUpstreamException(@Nullable String endpoint, Outcome outcome, int status, @Nullable Duration retryAfter,
			String message, @Nullable Throwable cause, @Nullable String noRetry) {
		super(message, endpoint, cause);
		this.outcome = outcome;
		this.status = status;
		this.retryAfter = retryAfter;
		this.noRetry = noRetry;
	}

	/**
	 * The same failure, not to be retried on the same endpoint whatever its outcome's rule says: the
	 * call has a better use for its time (a later endpoint, or no time left for another attempt).
	 * @param reason why, for the message
	 * @return the failure, marked
	 */
	public LlmUpstreamException withoutRetry(String reason) {
		return new LlmUpstreamException(endpoint(), this.outcome, this.status, this.retryAfter,
				getMessage() + " (not retried: " + reason + ")", getCause(), reason);
	}

	/**
	 * Why this failure is not retried on the same endpoint although its outcome could be.
	 * @return the reason, or {@code null} when the outcome's rule applies
	 */
	public @Nullable String noRetry() {
		return this.noRetry;
	}

	/**
	 * How the attempt is classified.
	 * @return the outcome
	 */
	public Outcome outcome() {
		return this.outcome;
	}

	/**
	 * The HTTP status of the response.
	 * @return the status, or 0 when no response arrived
	 */
	public int status() {
		return this.status;
	}

	/**
	 * The wait the provider asked for with {@code Retry-After} or {@code retry-after-ms}.
	 * @return the wait, or {@code null} when none was given
	 */
	public @Nullable Duration retryAfter() {
		return this.retryAfter;
	}

	/**
	 * The error object a provider put in a response body, reduced to what classification needs.
	 *
	 * @param type the error's type, e.g. {@code invalid_request_error}
	 * @param code the error's code, e.g. {@code content_filter} or {@code context_length_exceeded}
	 * @param message the provider's message
	 */
	public record ProviderError(@Nullable String type, @Nullable String code, @Nullable String message) {
	}

}
