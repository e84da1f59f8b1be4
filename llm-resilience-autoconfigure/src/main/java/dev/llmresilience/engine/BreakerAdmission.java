package dev.llmresilience.engine;

import dev.llmresilience.chat.Outcome;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

/**
 * The stage that lets an attempt through its endpoint's circuit breaker with a
 * {@link CircuitBreakerPermit} and records in the breaker how it ended: a success or a failure
 * measured to its first token, a slow call when it lost a hedged request's race, nothing when it was
 * refused further on, cancelled, abandoned (its deadline ran out, it was released) or ended with an
 * outcome that is neither (a filtered answer). An endpoint that probes itself keeps its half-open
 * state for its synthetic probes: a user's call does not pass it.
 */
final class BreakerAdmission implements AttemptStage {

	static final BreakerAdmission STAGE = new BreakerAdmission();

	private BreakerAdmission() {
	}

	@Override
	public @Nullable Throwable admit(EndpointAttempt attempt, long now) {
		LlmEndpoint endpoint = attempt.endpoint();
		CircuitBreaker breaker = endpoint.circuitBreaker();
		boolean probesOnly = attempt.call().exposure() != EndpointAttempt.Exposure.PROBE && endpoint.probesItself();
		if (probesOnly && breaker.getState() == CircuitBreaker.State.HALF_OPEN) {
			return CallNotPermittedException.createCallNotPermittedException(breaker);
		}
		CircuitBreakerPermit permit = CircuitBreakerPermit.tryAcquire(breaker, endpoint.startOrder(), now);
		if (permit == null) {
			return CallNotPermittedException.createCallNotPermittedException(breaker);
		}
		if (probesOnly && permit.fromCurrentHalfOpenState()) {
			// this call's permit request ended the open state's wait: the probes are the library's
			permit.release(now, attempt.scheduler());
			return CallNotPermittedException.createCallNotPermittedException(breaker);
		}
		attempt.permit = permit;
		return null;
	}

	@Override
	public void release(EndpointAttempt attempt, End end, long now) {
		CircuitBreakerPermit permit = attempt.permit;
		if (permit == null) {
			return;
		}
		switch (end) {
			case REFUSED, CANCELLED -> permit.release(now, attempt.scheduler());
			case LOST -> {
				long slow = attempt.endpoint()
					.circuitBreaker()
					.getCircuitBreakerConfig()
					.getSlowCallDurationThreshold()
					.toNanos();
				permit.succeeded(Math.max(now - attempt.start(), slow + 1), now, attempt.scheduler());
			}
			case FINISHED -> finished(attempt, permit, now);
		}
	}

	// The breaker sees the time to the first token: a long answer is not a slow provider.
	private static void finished(EndpointAttempt attempt, CircuitBreakerPermit permit, long now) {
		Outcome outcome = attempt.outcome();
		Throwable error = attempt.error();
		long firstToken = attempt.firstToken();
		long measured = ((firstToken >= 0) ? firstToken : now) - attempt.start();
		if (outcome == Outcome.DEADLINE_EXCEEDED || outcome == Outcome.RELEASED) {
			// abandoned by the call, not ended by the provider: nothing to record
			permit.release(now, attempt.scheduler());
		}
		else if (error != null) {
			permit.failed(measured, error, now, attempt.scheduler());
		}
		else if (outcome == Outcome.SUCCESS) {
			permit.succeeded(measured, now, attempt.scheduler());
		}
		else {
			// a normal end that is neither a success nor a failure (a filtered answer): ignored
			permit.release(now, attempt.scheduler());
		}
	}

}
