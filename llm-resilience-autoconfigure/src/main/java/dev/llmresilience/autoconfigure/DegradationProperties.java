package dev.llmresilience.autoconfigure;

import java.time.Duration;

/**
 * How silent degradation is made visible, under {@code llm.degradation}: the per-route share of
 * degraded answers (meter {@code llm.gateway.degraded.share}, the {@code llm} health details,
 * {@code /actuator/llmbreakers}), and a WARN when a route answers only degraded for too long.
 */
public class DegradationProperties {

	/** The time over which each route's share of degraded answers is computed, in whole seconds from 1s to 1h. */
	private Duration window = Duration.ofMinutes(5);

	/**
	 * How long a route may answer only degraded (FALLBACK, CACHED, DEFERRED or BUSY, no PRIMARY
	 * answer in between) before a WARN says so; 0 switches the WARN off.
	 */
	private Duration warnAfter = Duration.ofMinutes(2);

	public Duration getWindow() {
		return this.window;
	}

	public void setWindow(Duration window) {
		this.window = window;
	}

	public Duration getWarnAfter() {
		return this.warnAfter;
	}

	public void setWarnAfter(Duration warnAfter) {
		this.warnAfter = warnAfter;
	}

}
