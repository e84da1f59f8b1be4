package dev.llmresilience.failure;

import java.time.Duration;
import java.util.Map;

import dev.llmresilience.chat.Outcome.Action;
import dev.llmresilience.chat.Outcome;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The classifier on its own: docs/failure-rules.md row by row as {@link Outcome} values, and its
 * decisions on refused permits. The mapping of statuses, headers and transport errors onto outcomes
 * is {@code protocol/UpstreamFailuresTests}; the over-HTTP tests in the {@code gateway} package show
 * the same rows as a user sees them.
 */
class FailureClassifierTests {

	private final FailureClassifier classifier = new FailureClassifier();

	private record Row(boolean retried, boolean breakerFailure, Action then) {
	}

	private static final Map<Outcome, Row> CONTRACT = Map.ofEntries(
			Map.entry(Outcome.SUCCESS, new Row(false, false, Action.RETURN)),
			Map.entry(Outcome.EMPTY_RESPONSE, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.MALFORMED_RESPONSE, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.CONTENT_FILTERED, new Row(false, false, Action.FALL_BACK)),
			Map.entry(Outcome.SERVER_ERROR, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.RATE_LIMITED, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.TIMEOUT, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.CONNECTION_FAILED, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.INVALID_REQUEST, new Row(false, false, Action.SURFACE)),
			Map.entry(Outcome.CONTEXT_LENGTH_EXCEEDED, new Row(false, false, Action.SURFACE)),
			Map.entry(Outcome.CONFIGURATION_ERROR, new Row(false, true, Action.FALL_BACK)),
			Map.entry(Outcome.BREAKER_OPEN, new Row(false, false, Action.FALL_BACK)),
			Map.entry(Outcome.BULKHEAD_FULL, new Row(false, false, Action.FALL_BACK)),
			// the known rate limit cannot take the call: not sent, so neither retried nor counted
			Map.entry(Outcome.CAPACITY_EXHAUSTED, new Row(false, false, Action.FALL_BACK)),
			// streams after their first chunk: never retried, counted, handed to the caller
			Map.entry(Outcome.STREAM_INTERRUPTED, new Row(false, true, Action.SURFACE)),
			Map.entry(Outcome.STREAM_STALLED, new Row(false, true, Action.SURFACE)),
			// not rows of docs/failure-rules.md but of the guard and the deadline: no call made;
			// a spent guard stops every endpoint, a deadline only those whose timeout does not fit
			Map.entry(Outcome.GUARD_TRIPPED, new Row(false, false, Action.DEGRADE)),
			// the gateway-wide limit on calls in flight: no endpoint tried, degrade at once
			Map.entry(Outcome.GATEWAY_FULL, new Row(false, false, Action.DEGRADE)),
			Map.entry(Outcome.DEADLINE_EXCEEDED, new Row(false, false, Action.FALL_BACK)),
			// abandoned when the breaker opened before its first token: not counted twice
			Map.entry(Outcome.RELEASED, new Row(false, false, Action.FALL_BACK)),
			// the slower side of a hedged request: a slow call for its breaker, never a failure
			Map.entry(Outcome.HEDGE_LOST, new Row(false, false, Action.FALL_BACK)));

	@ParameterizedTest
	@EnumSource(Outcome.class)
	void everyOutcomeCarriesItsRowOfTheFailureRules(Outcome outcome) {
		assertThat(CONTRACT).containsKey(outcome);
		Row row = CONTRACT.get(outcome);
		assertThat(outcome.isRetryable()).as("retried").isEqualTo(row.retried());
		assertThat(outcome.isBreakerFailure()).as("breaker failure").isEqualTo(row.breakerFailure());
		assertThat(outcome.action()).as("then").isEqualTo(row.then());
	}

	@Test
	void refusedPermitsAreNeitherRetriedNorCounted() {
		CallNotPermittedException open = CallNotPermittedException
			.createCallNotPermittedException(CircuitBreaker.ofDefaults("ep"));
		BulkheadFullException full = BulkheadFullException.createBulkheadFullException(Bulkhead.ofDefaults("ep"));
		assertThat(FailureClassifier.outcomeOf(open)).isEqualTo(Outcome.BREAKER_OPEN);
		assertThat(FailureClassifier.outcomeOf(full)).isEqualTo(Outcome.BULKHEAD_FULL);
		assertThat(this.classifier.isRetryable(open, Duration.ofSeconds(10))).isFalse();
		assertThat(this.classifier.isBreakerFailure(full)).isFalse();
	}

}
