package dev.llmresilience.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * How a hang is told from an endpoint's own first-token times ({@code liveness.*} under
 * {@code llm.defaults} or {@code llm.endpoints.<name>}).
 */
public class LivenessProperties {

	/** The rule that opens the breaker of an endpoint that has stopped sending first tokens. */
	@NestedConfigurationProperty
	private final HangDetection hangDetection = new HangDetection();

	/**
	 * Shortest first-token bound of a synthetic probe. A probe waits for its first token
	 * hang-detection.p99-multiple times the 99th percentile of the endpoint's recent first tokens, at
	 * least this and at most first-token-timeout (first-token-timeout while fewer than 20 are known).
	 * Default 3s.
	 */
	private @Nullable Duration probeFloor;

	public HangDetection getHangDetection() {
		return this.hangDetection;
	}

	public @Nullable Duration getProbeFloor() {
		return this.probeFloor;
	}

	public void setProbeFloor(@Nullable Duration probeFloor) {
		this.probeFloor = probeFloor;
	}

	/** The evidence of a hang. */
	public static class HangDetection {

		/**
		 * Open the breaker, and release the calls waiting on it to the next endpoint, as soon as
		 * min-waiting-calls calls wait for their first token, the oldest for longer than the
		 * threshold, and no call of the endpoint has had a first token for as long; the threshold is
		 * p99-multiple times the 99th percentile of its recent first tokens (20 at least), at least
		 * floor. Off, or with too little evidence, first-token-timeout alone bounds the wait. Default
		 * true.
		 */
		private @Nullable Boolean enabled;

		/**
		 * How many times the 99th percentile of the endpoint's recent first-token times a silence must
		 * last to be evidence of a hang; at least 1. A threshold of first-token-timeout or more leaves
		 * the rule nothing to do. Default 3.0.
		 */
		private @Nullable Double p99Multiple;

		/** Shortest threshold, whatever the first-token times. Default 2s. */
		private @Nullable Duration floor;

		/**
		 * Fewest calls waiting for their first token at once that are evidence of a hang; with fewer
		 * (too little traffic), first-token-timeout bounds each wait. Default 5.
		 */
		private @Nullable Integer minWaitingCalls;

		public @Nullable Boolean getEnabled() {
			return this.enabled;
		}

		public void setEnabled(@Nullable Boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable Double getP99Multiple() {
			return this.p99Multiple;
		}

		public void setP99Multiple(@Nullable Double p99Multiple) {
			this.p99Multiple = p99Multiple;
		}

		public @Nullable Duration getFloor() {
			return this.floor;
		}

		public void setFloor(@Nullable Duration floor) {
			this.floor = floor;
		}

		public @Nullable Integer getMinWaitingCalls() {
			return this.minWaitingCalls;
		}

		public void setMinWaitingCalls(@Nullable Integer minWaitingCalls) {
			this.minWaitingCalls = minWaitingCalls;
		}

	}

}
