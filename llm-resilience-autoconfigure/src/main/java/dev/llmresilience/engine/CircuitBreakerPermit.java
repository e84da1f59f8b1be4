package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

/**
 * One attempt's permit of a circuit breaker, given back exactly once: as a success, as a failure
 * (recorded or ignored, as the breaker's predicates say), or unrecorded when the attempt was
 * cancelled or abandoned. Resilience4j's reactor operator is not used because it measures a call by
 * its whole length and records a cancel after the first element as a success, both wrong for a
 * stream; and it gives a permit back to whatever state the breaker is in by then: a call let through
 * while CLOSED that is cancelled, or ends with an ignored outcome (a content filter, an invalid
 * request), once the breaker is HALF_OPEN would add a probe the half-open state never gave, and more
 * calls than {@code permitted-calls-in-half-open-state} would reach a provider that is recovering.
 * Here a permit goes back only to the half-open state that gave it.
 */
final class CircuitBreakerPermit {

	private final CircuitBreaker breaker;

	// Resilience4j gives each state its own window and keeps it for the state's life, so the window
	// tells the half-open state (and episode) that gave the permit from any later one.
	private final CircuitBreaker.Metrics window;

	private final AtomicBoolean ended = new AtomicBoolean();

	private CircuitBreakerPermit(CircuitBreaker breaker) {
		this.breaker = breaker;
		this.window = breaker.getMetrics();
	}

	/**
	 * Take a permit of the breaker.
	 * @param breaker the breaker
	 * @return the permit, or {@code null} when the breaker refused (open, or its probes in use)
	 */
	static @Nullable CircuitBreakerPermit tryAcquire(CircuitBreaker breaker) {
		return breaker.tryAcquirePermission() ? new CircuitBreakerPermit(breaker) : null;
	}

	/**
	 * Record a success.
	 * @param nanos the duration the breaker sees, for its slow-call rate
	 */
	void succeeded(long nanos) {
		if (this.ended.compareAndSet(false, true)) {
			this.breaker.onSuccess(nanos, TimeUnit.NANOSECONDS);
		}
	}

	/**
	 * Record a failure, or ignore it when the breaker's predicates say it is none of the provider's
	 * doing.
	 * @param nanos the duration the breaker sees
	 * @param error the classified error
	 */
	void failed(long nanos, Throwable error) {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		boolean ignored = this.breaker.getCircuitBreakerConfig().getIgnoreExceptionPredicate().test(error);
		// an ignored error gives the permit back, which must not reach a half-open state that did not give it
		if (!ignored || ownsPermit()) {
			this.breaker.onError(nanos, TimeUnit.NANOSECONDS, error);
		}
	}

	/** Give the permit back unrecorded: the attempt was cancelled, abandoned, or neither won nor lost. */
	void release() {
		if (this.ended.compareAndSet(false, true) && ownsPermit()) {
			this.breaker.releasePermission();
		}
	}

	/**
	 * Whether the half-open state that gave this permit is still the breaker's state.
	 * @return true while the breaker is half-open in the episode that gave the permit
	 */
	boolean fromCurrentHalfOpenState() {
		return this.breaker.getState() == CircuitBreaker.State.HALF_OPEN && this.breaker.getMetrics() == this.window;
	}

	private boolean ownsPermit() {
		return owns(this.breaker, this.window);
	}

	/**
	 * Whether a permit taken while the breaker's window was {@code window} may be given back now:
	 * always, unless the breaker is half-open in another episode than the one that gave it.
	 * @param breaker the breaker
	 * @param window {@code breaker.getMetrics()} when the permit was taken
	 * @return true if the permit may be released into the current state
	 */
	static boolean owns(CircuitBreaker breaker, CircuitBreaker.@Nullable Metrics window) {
		return breaker.getState() != CircuitBreaker.State.HALF_OPEN || breaker.getMetrics() == window;
	}

}
