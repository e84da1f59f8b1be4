package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;

/**
 * One attempt's permit of a circuit breaker, given back exactly once: as a success, as a failure
 * (recorded or ignored, as the breaker's predicates say), or unrecorded when the attempt was
 * cancelled or abandoned. Resilience4j's reactor operator is not used because it measures a call by
 * its whole length and records a cancel after the first element as a success, both wrong for a
 * stream; and it gives a permit back to whatever state the breaker is in by then: a call let through
 * while CLOSED that is cancelled, or ends with an ignored outcome (a content filter, an invalid
 * request), once the breaker is HALF_OPEN would add a probe the half-open state never gave, and more
 * calls than {@code permitted-calls-in-half-open-state} would reach a provider that is recovering.
 * Here a permit goes back only to the half-open state that gave it. A closed breaker gets its
 * permits' outcomes in the order the attempts started ({@link StartOrder}).
 */
final class CircuitBreakerPermit {

	private final CircuitBreaker breaker;

	// Resilience4j gives each state its own window and keeps it for the state's life, so the window
	// tells the half-open state (and episode) that gave the permit from any later one.
	private final CircuitBreaker.Metrics window;

	private final AtomicBoolean ended = new AtomicBoolean();

	private final @Nullable StartOrder order;

	// its place in the closed window's start order, null when its outcome is recorded as it ends
	private final StartOrder.@Nullable Slot slot;

	private CircuitBreakerPermit(CircuitBreaker breaker, @Nullable StartOrder order, long now) {
		this.breaker = breaker;
		this.window = breaker.getMetrics();
		this.order = order;
		this.slot = (order != null) ? order.start(this.window, now) : null;
	}

	/**
	 * Take a permit of the breaker whose outcome, while the breaker is closed, is recorded in the
	 * order the attempts started.
	 * @param breaker the breaker
	 * @param order the breaker's start order, {@code null} to record each outcome as it ends
	 * @param now the time, in nanoseconds
	 * @return the permit, or {@code null} when the breaker refused (open, or its probes in use)
	 */
	static @Nullable CircuitBreakerPermit tryAcquire(CircuitBreaker breaker, @Nullable StartOrder order, long now) {
		return breaker.tryAcquirePermission() ? new CircuitBreakerPermit(breaker, order, now) : null;
	}

	/**
	 * Record a success.
	 * @param nanos the duration the breaker sees, for its slow-call rate
	 * @param now the time, in nanoseconds
	 * @param scheduler the attempt's scheduler, whose clock {@code now} is read from
	 */
	void succeeded(long nanos, long now, Scheduler scheduler) {
		if (this.ended.compareAndSet(false, true)) {
			record(() -> this.breaker.onSuccess(nanos, TimeUnit.NANOSECONDS), now, scheduler);
		}
	}

	/**
	 * Record a failure, or ignore it when the breaker's predicates say it is none of the provider's
	 * doing.
	 * @param nanos the duration the breaker sees
	 * @param error the classified error
	 * @param now the time, in nanoseconds
	 * @param scheduler the attempt's scheduler, whose clock {@code now} is read from
	 */
	void failed(long nanos, Throwable error, long now, Scheduler scheduler) {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		record(() -> {
			boolean ignored = this.breaker.getCircuitBreakerConfig().getIgnoreExceptionPredicate().test(error);
			// an ignored error gives the permit back, which must not reach a half-open state that did not give it
			if (!ignored || ownsPermit()) {
				this.breaker.onError(nanos, TimeUnit.NANOSECONDS, error);
			}
		}, now, scheduler);
	}

	/**
	 * Give the permit back unrecorded: the attempt was cancelled, abandoned, or neither won nor lost.
	 * @param now the time, in nanoseconds
	 * @param scheduler the attempt's scheduler, whose clock {@code now} is read from
	 */
	void release(long now, Scheduler scheduler) {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		if (this.order != null && this.slot != null) {
			// a closed state's permit: nothing to give back, only its place in the order
			this.order.end(this.slot, null, now, scheduler);
		}
		else if (ownsPermit()) {
			this.breaker.releasePermission();
		}
	}

	private void record(Runnable outcome, long now, Scheduler scheduler) {
		if (this.order != null && this.slot != null) {
			this.order.end(this.slot, outcome, now, scheduler);
		}
		else {
			outcome.run();
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
