package dev.llmresilience.failure;

import java.time.Duration;

import dev.llmresilience.chat.Outcome;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import org.jspecify.annotations.Nullable;

/**
 * The decisions of docs/failure-rules.md: what an {@link Outcome} means for the retry and the
 * circuit breaker of every endpoint the auto-configuration builds, which ask the instance the
 * application context holds rather than deciding for themselves. What an upstream response or
 * transport error <em>is</em> (its {@link Outcome}) is the wire mapping of
 * {@code dev.llmresilience.protocol.UpstreamFailures}, one layer up.
 * <p>
 * Replaceable: declare a bean of a subclass and override {@link #isRetryable(Throwable, Duration)},
 * {@link #retryAfter(Throwable)} or {@link #isBreakerFailure(Throwable)} to change what is retried,
 * how long a retry waits and what the breaker counts. The {@link Outcome} of an error and what the
 * gateway does with it (fall back, degrade, or hand it to the caller: {@link Outcome#action()}) stay
 * the fixed table of {@link Outcome}, so that the metrics, the actuator and the docs keep meaning the
 * same.
 */
public class FailureClassifier {

	/**
	 * Create the starter's classifier.
	 */
	public FailureClassifier() {
	}

	/**
	 * The outcome an error stands for: the fixed table, not a decision a subclass may change.
	 * @param error a classified error
	 * @return its outcome
	 */
	public static Outcome outcomeOf(Throwable error) {
		if (error instanceof LlmUpstreamException upstream) {
			return upstream.outcome();
		}
		if (error instanceof LlmRequestException request) {
			return request.outcome();
		}
		if (error instanceof LlmStreamInterruptedException interrupted) {
			return interrupted.outcome();
		}
		if (error instanceof CallNotPermittedException) {
			return Outcome.BREAKER_OPEN;
		}
		if (error instanceof BulkheadFullException) {
			return Outcome.BULKHEAD_FULL;
		}
		return Outcome.CONNECTION_FAILED;
	}

	/**
	 * Whether the same endpoint should try again after an error: by default when its
	 * {@link Outcome#isRetryable() outcome is retryable}, no rule refused it (a stream that had
	 * started, no time left in the deadline) and the wait the provider asked for is not longer than
	 * {@code maxRetryAfter}. Asked by the retry of every endpoint and before each retry's wait.
	 * @param error a classified error
	 * @param maxRetryAfter the longest {@code Retry-After} worth waiting for
	 * @return true to retry
	 */
	public boolean isRetryable(Throwable error, Duration maxRetryAfter) {
		if (!outcomeOf(error).isRetryable()) {
			return false;
		}
		if (error instanceof LlmUpstreamException upstream && upstream.noRetry() != null) {
			return false;
		}
		Duration retryAfter = retryAfter(error);
		return retryAfter == null || retryAfter.compareTo(maxRetryAfter) <= 0;
	}

	/**
	 * The wait before retrying an error, when the provider set one: by default the
	 * {@code Retry-After} its response carried. {@code null} lets the endpoint's backoff decide, and
	 * so does a wait that is zero or negative: the endpoint never retries back to back.
	 * @param error a classified error
	 * @return the wait, or {@code null} for the endpoint's backoff
	 */
	public @Nullable Duration retryAfter(Throwable error) {
		return (error instanceof LlmUpstreamException upstream) ? upstream.retryAfter() : null;
	}

	/**
	 * Whether the circuit breaker records an error as a failure; all other errors are ignored (they
	 * neither count for nor against the endpoint). By default
	 * {@link Outcome#isBreakerFailure() as its outcome says}.
	 * @param error a classified error
	 * @return true to record a failure
	 */
	public boolean isBreakerFailure(Throwable error) {
		return outcomeOf(error).isBreakerFailure();
	}

}
