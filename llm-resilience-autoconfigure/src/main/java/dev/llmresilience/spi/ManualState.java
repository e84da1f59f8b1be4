package dev.llmresilience.spi;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

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
