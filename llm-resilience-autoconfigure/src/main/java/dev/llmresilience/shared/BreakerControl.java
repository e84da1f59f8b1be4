package dev.llmresilience.shared;

import dev.llmresilience.endpoint.LlmEndpoint;
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
	 * @param endpoint the endpoint
	 * @param state the state to move it to
	 */
	void transition(LlmEndpoint endpoint, ManualState state);

	/**
	 * Move this instance's breaker.
	 * @param endpoint the endpoint
	 * @param state the state to move it to
	 */
	static void apply(LlmEndpoint endpoint, ManualState state) {
		CircuitBreaker breaker = endpoint.circuitBreaker();
		switch (state) {
			case FORCED_OPEN -> breaker.transitionToForcedOpenState();
			case CLOSED -> breaker.transitionToClosedState();
			case DISABLED -> breaker.transitionToDisabledState();
			case RESET -> breaker.reset();
		}
	}

}
