package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.scheduler.Scheduler;

/**
 * The time rules of the attempts of one endpoint call (docs/liveness.md): each attempt's
 * {@link AttemptWatchdog}, its bounds capped at what is left of the call's deadline; the failure
 * each bound stands for when it fires; and whether a retry still fits in what is left.
 */
final class AttemptTime implements Function<AttemptWatchdog.Expiry, Throwable> {

	/** Why a retry was refused: the deadline could not fit it. */
	static final String NO_TIME_LEFT = "what is left of the call's deadline cannot fit another attempt";

	private final EndpointSettings settings;

	private final ChatRequest request;

	private final EndpointAttempt.Exposure exposure;

	private final CallContext context;

	private final boolean streaming;

	private final FailureClassifier classifier;

	AttemptTime(EndpointSettings settings, ChatRequest request, EndpointAttempt.Exposure exposure,
			CallContext context, boolean streaming, FailureClassifier classifier) {
		this.settings = settings;
		this.classifier = classifier;
		this.request = request;
		this.exposure = exposure;
		this.context = context;
		this.streaming = streaming;
	}

	// Each of the endpoint's bounds, capped at what is left of the call's deadline. Without upstream
	// streaming the first token comes with the whole answer, so only the attempt's timeout bounds it.
	<T> AttemptWatchdog<T> watchdog(CoreSubscriber<? super T> actual, Scheduler scheduler, long now,
			Predicate<? super T> isToken) {
		boolean stream = this.exposure == EndpointAttempt.Exposure.STREAM;
		long attemptBy = stream ? Long.MAX_VALUE : plus(now, timeout());
		long firstTokenBy = this.streaming ? plus(now, this.settings.timeouts().firstTokenTimeout())
				: stream ? plus(now, timeout()) : Long.MAX_VALUE;
		long deadlineAfter = stream ? this.context.streamDeadlineNanos() : this.context.deadlineNanos();
		AttemptWatchdog.Bounds bounds = new AttemptWatchdog.Bounds(firstTokenBy,
				this.settings.timeouts().streamIdleTimeout().toNanos(), attemptBy, this.context.deadlineNanos(),
				deadlineAfter);
		return new AttemptWatchdog<>(actual, scheduler, bounds, isToken, this);
	}

	Duration timeout() {
		return (this.request.timeout() != null) ? this.request.timeout() : this.settings.timeouts().timeout();
	}

	@Override
	public Throwable apply(AttemptWatchdog.Expiry expiry) {
		return switch (expiry) {
			case FIRST_TOKEN -> {
				if (!this.streaming) {
					yield upstream(Outcome.TIMEOUT, "Timed out: no answer within " + timeout() + " (timeout)");
				}
				LlmUpstreamException timeout = upstream(Outcome.TIMEOUT, "Timed out: no content within "
						+ this.settings.timeouts().firstTokenTimeout()
						+ ((this.exposure == EndpointAttempt.Exposure.PROBE)
								? " (a probe's bound: liveness.hang-detection.p99-multiple times the p99 of first tokens, "
										+ "at least liveness.probe-floor, at most first-token-timeout)"
								: " (first-token-timeout)"));
				yield (this.exposure != EndpointAttempt.Exposure.PROBE && this.context.laterEndpointAvailable().getAsBoolean())
						? timeout.withoutRetry("a later endpoint of the route is available") : timeout;
			}
			case IDLE -> upstream(Outcome.TIMEOUT,
					"Timed out: no chunk for " + this.settings.timeouts().streamIdleTimeout() + " (stream-idle-timeout)");
			case ATTEMPT -> upstream(Outcome.TIMEOUT, "Timed out: no complete answer within " + timeout() + " (timeout)");
			case DEADLINE -> upstream(Outcome.DEADLINE_EXCEEDED, "The call's deadline ran out during the attempt");
			case RELEASED -> upstream(Outcome.RELEASED, "The breaker of endpoint '" + this.settings.name()
					+ "' opened while this attempt waited for its first token");
		};
	}

	/**
	 * The wait before a retry that the classifier asks for, where it asks for one still to come: a
	 * zero or negative wait (a user's classifier may give one) leaves the backoff in force, so
	 * retries never follow each other back to back. What the retry waits and what the deadline check
	 * reserves both read it here.
	 * @param classifier the failure rules
	 * @param error the attempt's failure
	 * @return the wait, or {@code null} for the backoff
	 */
	static @Nullable Duration waitAskedFor(FailureClassifier classifier, Throwable error) {
		Duration wait = classifier.retryAfter(error);
		return (wait != null && wait.compareTo(Duration.ZERO) > 0) ? wait : null;
	}

	// No retry that the call's deadline cannot fit, its wait and its own bound included: the time is
	// better left to the route's next endpoint, which is tried with whatever is left.
	Throwable withinDeadline(Throwable error, int number, long now) {
		if (!(error instanceof LlmUpstreamException upstream) || !this.classifier.isRetryable(error,
				this.settings.retry().maxRetryAfter()) || number >= this.settings.retry().maxAttempts()
				|| this.context.deadlineNanos() == Long.MAX_VALUE) {
			return error;
		}
		EndpointSettings.RetrySettings retry = this.settings.retry();
		Duration retryAfter = waitAskedFor(this.classifier, error);
		long waitMillis = (retryAfter != null) ? retryAfter.toMillis()
				: Math.min(retry.maxBackoff().toMillis(), Math.round(retry.backoffMillis(number) * (1 + retry.jitter())));
		Duration bound = (this.exposure == EndpointAttempt.Exposure.STREAM && this.streaming)
				? this.settings.timeouts().firstTokenTimeout() : timeout();
		long needed = TimeUnit.MILLISECONDS.toNanos(waitMillis) + bound.toNanos();
		return (this.context.deadlineNanos() - now < needed) ? upstream.withoutRetry(NO_TIME_LEFT) : error;
	}

	LlmUpstreamException upstream(Outcome outcome, String message) {
		return new LlmUpstreamException(this.settings.name(), outcome, 0, null, message, null);
	}

	private static long plus(long at, Duration duration) {
		long nanos = duration.toNanos();
		return (Long.MAX_VALUE - at < nanos) ? Long.MAX_VALUE : at + nanos;
	}

}
