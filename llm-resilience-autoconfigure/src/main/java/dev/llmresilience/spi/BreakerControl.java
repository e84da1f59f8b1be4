package dev.llmresilience.spi;

import java.util.Locale;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

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

	/** A state an operator moves a circuit breaker to by hand. */
	public enum ManualState {

		/** No calls until changed back. */
		FORCED_OPEN,

		/** Closed, keeping the window. */
		CLOSED,

		/** Always lets calls through and records nothing. */
		DISABLED,

		/** Closed, with an empty window. */
		RESET;

		/**
		 * Parse a state's name, in any case.
		 * @param name the name
		 * @return the state, or {@code null} for an unknown name
		 */
		public static @Nullable ManualState parse(String name) {
			for (ManualState state : values()) {
				if (state.name().equals(name.trim().toUpperCase(Locale.ROOT))) {
					return state;
				}
			}
			return null;
		}

	}

}
