package dev.llmresilience.redis;

import dev.llmresilience.spi.BreakerControl.ManualState;
import org.jspecify.annotations.Nullable;

/**
 * What the fleet tells a replica's breaker, as the breaker scripts reply and the replicas publish
 * it on the channel: each constant's name is its word on the wire.
 */
enum FleetDecision {

	/** This replica's outcomes opened the fleet's breaker: it leads the probes. */
	OPENED,

	/** The fleet's breaker is open (another replica opened it). */
	OPEN,

	/** The leader's probes failed: open again. */
	REOPENED,

	/** The leader's probes succeeded: closed. */
	RECOVERED,

	/** Forced open by hand. */
	FORCED_OPEN,

	/** Disabled by hand. */
	DISABLED,

	/** Closed by hand. */
	CLOSED,

	/** Reset by hand. */
	RESET,

	/** Counted, nothing decided (also what an unknown word stands for). */
	COUNTED;

	/**
	 * The decision a word stands for.
	 * @param word a script's reply or a channel message's first part
	 * @return its decision, {@link #COUNTED} for a word this version does not know
	 */
	static FleetDecision of(String word) {
		for (FleetDecision decision : values()) {
			if (decision.name().equals(word)) {
				return decision;
			}
		}
		return COUNTED;
	}

	/**
	 * The state set by hand this decision carries.
	 * @return it, or {@code null} for a decision of the breakers' own
	 */
	@Nullable ManualState manual() {
		return switch (this) {
			case FORCED_OPEN -> ManualState.FORCED_OPEN;
			case DISABLED -> ManualState.DISABLED;
			case CLOSED -> ManualState.CLOSED;
			case RESET -> ManualState.RESET;
			default -> null;
		};
	}

}
