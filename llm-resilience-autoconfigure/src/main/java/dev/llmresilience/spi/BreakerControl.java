package dev.llmresilience.spi;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;

/**
 * Moves an endpoint's circuit breaker by hand: on this instance only ({@link #LOCAL}), or on every
 * replica (shared state on Redis). Never blocks.
 */
public interface BreakerControl {

	/** Moves this instance's breaker only. */
	BreakerControl LOCAL = BreakerControl::apply;

	/**
	 * Move a breaker.
	 * @param breaker the endpoint's circuit breaker
	 * @param state the state to move it to
	 */
	void transition(CircuitBreaker breaker, ManualState state);

	/**
	 * Move this instance's breaker.
	 * @param breaker the endpoint's circuit breaker
	 * @param state the state to move it to
	 */
	static void apply(CircuitBreaker breaker, ManualState state) {
		switch (state) {
			case FORCED_OPEN -> breaker.transitionToForcedOpenState();
			case CLOSED -> breaker.transitionToClosedState();
			case DISABLED -> breaker.transitionToDisabledState();
			case RESET -> breaker.reset();
		}
	}

}
