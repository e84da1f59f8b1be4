package dev.llmresilience.spi;

import java.util.Locale;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

/**
 * Moves endpoints' circuit breakers beyond what their own windows decide: by hand, and on this
 * instance's evidence of a hang; on this instance only ({@link #LOCAL}), or on every replica (shared
 * state on Redis), where it also says why the fleet moved one. Never blocks.
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
	 * This instance opened a breaker on evidence other than its window's failures (a hang known from
	 * the endpoint's first-token times): shared state opens it on every replica, as an open its
	 * window decided. Never blocks; does nothing without shared state.
	 * @param breaker the endpoint's circuit breaker, opened
	 * @param reason why, as this instance's transition log says it
	 */
	default void openedOnEvidence(CircuitBreaker breaker, String reason) {
	}

	/**
	 * Why shared state is moving a breaker, for the listeners of the transition while it is being
	 * published (on the thread that moves it).
	 * @param breaker the endpoint's circuit breaker
	 * @return e.g. {@code opened by replica b: no first token from 14 calls for 2.1 s; ...}, or
	 * {@code null} when the move is not shared state's
	 */
	default @Nullable String moving(CircuitBreaker breaker) {
		return null;
	}

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
