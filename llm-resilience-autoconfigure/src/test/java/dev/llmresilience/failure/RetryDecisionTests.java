package dev.llmresilience.failure;

import java.time.Duration;
import java.util.List;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.Outcome;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The classifier's retry decision beyond the outcome's row: a failure marked not to be retried is
 * not, and a provider's {@code Retry-After} is waited for up to {@code max-retry-after} inclusive;
 * and what the gateway's errors tell their caller.
 */
class RetryDecisionTests {

	private static final Duration MAX_RETRY_AFTER = Duration.ofSeconds(10);

	private final FailureClassifier classifier = new FailureClassifier();

	@Test
	void retryableFailureMarkedNotToBeRetriedIsNotRetried() {
		LlmUpstreamException overloaded = upstream(Outcome.SERVER_ERROR, null);
		assertThat(this.classifier.isRetryable(overloaded, MAX_RETRY_AFTER)).isTrue();
		LlmUpstreamException marked = overloaded.withoutRetry("a later endpoint of the route is available");
		assertThat(this.classifier.isRetryable(marked, MAX_RETRY_AFTER)).isFalse();
		assertThat(marked.noRetry()).isEqualTo("a later endpoint of the route is available");
		assertThat(marked).hasMessage("overloaded (not retried: a later endpoint of the route is available)");
		assertThat(marked.outcome()).isEqualTo(Outcome.SERVER_ERROR);
	}

	@Test
	void retryAfterOfExactlyTheLongestWorthWaitingForIsWaitedFor() {
		assertThat(this.classifier.isRetryable(upstream(Outcome.RATE_LIMITED, MAX_RETRY_AFTER), MAX_RETRY_AFTER))
			.isTrue();
		assertThat(this.classifier.retryAfter(upstream(Outcome.RATE_LIMITED, MAX_RETRY_AFTER)))
			.isEqualTo(MAX_RETRY_AFTER);
		assertThat(this.classifier.isRetryable(upstream(Outcome.RATE_LIMITED, MAX_RETRY_AFTER.plusMillis(1)),
				MAX_RETRY_AFTER))
			.isFalse();
		assertThat(this.classifier.retryAfter(new IllegalStateException("no provider's answer"))).isNull();
	}

	@Test
	void unavailableErrorNamesTheRouteAndKeepsEveryAttempt() {
		List<Attempt> attempts = List.of(new Attempt("primary", Outcome.SERVER_ERROR, Duration.ofMillis(5)));
		LlmUnavailableException error = new LlmUnavailableException("chat", attempts);
		assertThat(error.route()).isEqualTo("chat");
		assertThat(error.attempts()).isEqualTo(attempts);
	}

	@Test
	void interruptedStreamKeepsTheTextTheCallerReceived() {
		LlmStreamInterruptedException error = new LlmStreamInterruptedException("primary", Outcome.STREAM_STALLED,
				"Once upon", "stalled", null);
		assertThat(error.partial()).isEqualTo("Once upon");
		assertThat(FailureClassifier.outcomeOf(error)).isEqualTo(Outcome.STREAM_STALLED);
	}

	private static LlmUpstreamException upstream(Outcome outcome, Duration retryAfter) {
		return new LlmUpstreamException("primary", outcome, 503, retryAfter, "overloaded", null);
	}

}
