package dev.llmresilience.engine;

import java.time.Duration;

/**
 * How one route hedges its requests ({@code llm.gateway.hedge}, or a route's own
 * {@code llm.gateway.hedge.routes.<route>}): when an endpoint has not brought its first token
 * after the hedge delay, the same request is sent to the route's next endpoint too, the first to
 * bring a token wins, and the other is cancelled.
 *
 * @param enabled whether the route hedges at all
 * @param adaptive whether the delay is the endpoint's observed first-token {@code percentile}
 * rather than the fixed {@code delay}
 * @param percentile which percentile of the endpoint's recent first-token times an adaptive delay
 * is (above 0, below 100)
 * @param delay the fixed delay; for an adaptive one, the delay until the endpoint has
 * {@value dev.llmresilience.engine.FirstTokenTimes#MIN_SAMPLES} first-token times
 * @param minDelay the shortest adaptive delay, so that a fast endpoint's jitter does not hedge
 * @param maxRatio the most hedged calls as a share of the route's calls in {@code window} (0 to 1)
 * @param window the sliding window of the hedge budget
 * @param byPromptSize whether an adaptive delay is read from the first-token times of prompts of the
 * call's size (falling back to all the endpoint's while that size has too few)
 */
record HedgeSettings(boolean enabled, boolean adaptive, double percentile, Duration delay, Duration minDelay,
		double maxRatio, Duration window, boolean byPromptSize) {

	/**
	 * The built-in defaults: off; when on, adaptive at the 95th percentile of the call's prompt size,
	 * at most 10 % of a minute's calls.
	 */
	public static final HedgeSettings DEFAULTS = new HedgeSettings(false, true, 95, Duration.ofSeconds(2),
			Duration.ofMillis(100), 0.1, Duration.ofMinutes(1), true);

	public HedgeSettings {
		if (!(percentile > 0 && percentile < 100)) {
			throw new IllegalArgumentException("percentile must be above 0 and below 100, was " + percentile);
		}
		if (delay.isNegative() || delay.isZero() || minDelay.isNegative()) {
			throw new IllegalArgumentException("delay must be positive and min-delay not negative");
		}
		if (!(maxRatio >= 0 && maxRatio <= 1)) {
			throw new IllegalArgumentException("max-ratio must be between 0 and 1, was " + maxRatio);
		}
		if (window.isNegative() || window.isZero()) {
			throw new IllegalArgumentException("window must be positive, was " + window);
		}
	}

	/**
	 * The same settings, switched on.
	 * @return the settings, enabled
	 */
	public HedgeSettings on() {
		return new HedgeSettings(true, this.adaptive, this.percentile, this.delay, this.minDelay, this.maxRatio,
				this.window, this.byPromptSize);
	}

}
