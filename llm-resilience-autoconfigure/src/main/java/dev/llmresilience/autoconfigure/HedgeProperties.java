package dev.llmresilience.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Hedged requests, under {@code llm.gateway.hedge}: when an endpoint has not brought its first
 * token after the hedge delay, the same request also goes to the route's next endpoint; the first
 * to bring a token wins and the other is cancelled. Off by default; on for every route with
 * {@code enabled}, or for some routes under {@code routes.<route>}. See docs/hedging.md.
 */
public class HedgeProperties {

	/**
	 * Whether routes hedge their requests. Default false. A route's own routes.<route>.enabled
	 * wins.
	 */
	private boolean enabled = false;

	/**
	 * Whether the hedge delay is the endpoint's recent time-to-first-token percentile (adaptive)
	 * rather than the fixed delay. Default true.
	 */
	private boolean adaptive = true;

	/**
	 * Which percentile of the endpoint's recent times to first token an adaptive delay waits for,
	 * above 0 and below 100. Default 95.
	 */
	private double percentile = 95;

	/**
	 * The fixed hedge delay; also an adaptive delay's until the endpoint has 20 first-token times.
	 * Default 2s.
	 */
	private Duration delay = Duration.ofSeconds(2);

	/** The shortest adaptive delay, so that a fast endpoint's jitter is not hedged. Default 100ms. */
	private Duration minDelay = Duration.ofMillis(100);

	/**
	 * The hedge budget: hedged calls at most this share of the route's calls in the window, from 0
	 * (never) to 1. Default 0.1.
	 */
	private double maxRatio = 0.1;

	/** The sliding window the hedge budget counts calls in. Default 1m. */
	private Duration window = Duration.ofMinutes(1);

	/**
	 * Whether an adaptive delay is learned per prompt size as well as per endpoint: the
	 * percentile of the first-token times of prompts of the call's size (by characters, in
	 * buckets of powers of 4: below 256, 1K, 4K, 16K, 64K, and above), the endpoint's over all
	 * sizes while that size has fewer than 20. Default true.
	 */
	private boolean byPromptSize = true;

	/** Routes' own hedging, by route name; a key left unset takes the value above. */
	private Map<String, Route> routes = new LinkedHashMap<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public boolean isAdaptive() {
		return this.adaptive;
	}

	public void setAdaptive(boolean adaptive) {
		this.adaptive = adaptive;
	}

	public double getPercentile() {
		return this.percentile;
	}

	public void setPercentile(double percentile) {
		this.percentile = percentile;
	}

	public Duration getDelay() {
		return this.delay;
	}

	public void setDelay(Duration delay) {
		this.delay = delay;
	}

	public Duration getMinDelay() {
		return this.minDelay;
	}

	public void setMinDelay(Duration minDelay) {
		this.minDelay = minDelay;
	}

	public double getMaxRatio() {
		return this.maxRatio;
	}

	public void setMaxRatio(double maxRatio) {
		this.maxRatio = maxRatio;
	}

	public Duration getWindow() {
		return this.window;
	}

	public void setWindow(Duration window) {
		this.window = window;
	}

	public boolean isByPromptSize() {
		return this.byPromptSize;
	}

	public void setByPromptSize(boolean byPromptSize) {
		this.byPromptSize = byPromptSize;
	}

	public Map<String, Route> getRoutes() {
		return this.routes;
	}

	public void setRoutes(Map<String, Route> routes) {
		this.routes = routes;
	}

	/** One route's own hedging; each key left unset takes llm.gateway.hedge's value. */
	public static class Route {

		/** Whether this route hedges its requests. */
		private @Nullable Boolean enabled;

		/** Whether this route's hedge delay is adaptive. */
		private @Nullable Boolean adaptive;

		/** The percentile an adaptive delay waits for on this route. */
		private @Nullable Double percentile;

		/** This route's fixed hedge delay. */
		private @Nullable Duration delay;

		/** This route's shortest adaptive delay. */
		private @Nullable Duration minDelay;

		/** This route's hedge budget, as a share of its calls in the window. */
		private @Nullable Double maxRatio;

		/** The sliding window of this route's hedge budget. */
		private @Nullable Duration window;

		/** Whether this route's adaptive delay is learned per prompt size as well as per endpoint. */
		private @Nullable Boolean byPromptSize;

		public @Nullable Boolean getEnabled() {
			return this.enabled;
		}

		public void setEnabled(@Nullable Boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable Boolean getAdaptive() {
			return this.adaptive;
		}

		public void setAdaptive(@Nullable Boolean adaptive) {
			this.adaptive = adaptive;
		}

		public @Nullable Double getPercentile() {
			return this.percentile;
		}

		public void setPercentile(@Nullable Double percentile) {
			this.percentile = percentile;
		}

		public @Nullable Duration getDelay() {
			return this.delay;
		}

		public void setDelay(@Nullable Duration delay) {
			this.delay = delay;
		}

		public @Nullable Duration getMinDelay() {
			return this.minDelay;
		}

		public void setMinDelay(@Nullable Duration minDelay) {
			this.minDelay = minDelay;
		}

		public @Nullable Double getMaxRatio() {
			return this.maxRatio;
		}

		public void setMaxRatio(@Nullable Double maxRatio) {
			this.maxRatio = maxRatio;
		}

		public @Nullable Duration getWindow() {
			return this.window;
		}

		public void setWindow(@Nullable Duration window) {
			this.window = window;
		}

		public @Nullable Boolean getByPromptSize() {
			return this.byPromptSize;
		}

		public void setByPromptSize(@Nullable Boolean byPromptSize) {
			this.byPromptSize = byPromptSize;
		}

	}

}
