package dev.llmresilience.autoconfigure;

import java.time.Duration;

import dev.llmresilience.gateway.EndpointSettings;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.util.unit.DataSize;

/**
 * The resilience settings of an endpoint. Used twice: under {@code llm.defaults}, where a value
 * applies to every endpoint that does not set it, and under {@code llm.endpoints.<name>}, where it
 * overrides the default for that endpoint. A key set in neither place takes the built-in default
 * stated on it, declared once in {@code ResilienceDefaults}.
 */
public class ResilienceProperties {

	/**
	 * Longest wait for one chat attempt, from sending the request to the complete answer (a stream's
	 * length is not bounded by it). Sits inside the circuit breaker, so a timeout counts as a
	 * failure; capped at what is left of the call's deadline. Default 60s.
	 */
	private @Nullable Duration timeout;

	/** Longest wait for a TCP connection to the endpoint. Default 5s. */
	private @Nullable Duration connectTimeout;

	/**
	 * Longest wait from sending the request to the first content chunk, for every call that goes
	 * upstream as a stream (chat included, see upstream-streaming). A breaker failure recorded when
	 * it fires; not retried on the same endpoint while a later endpoint of the route is available.
	 * Default 10s.
	 */
	private @Nullable Duration firstTokenTimeout;

	/** Longest silence allowed between two chunks once tokens flow (chat included). Default 30s. */
	private @Nullable Duration streamIdleTimeout;

	/**
	 * Send chat calls upstream as streams and assemble the answer, so that first-token-timeout and
	 * stream-idle-timeout bound them too. Set false for a server that cannot stream; a server that
	 * answers a streamed request with plain JSON works either way. Default true.
	 */
	private @Nullable Boolean upstreamStreaming;

	/**
	 * Largest response body read into memory; a larger one fails the attempt as malformed instead
	 * of exhausting the heap. Default 10MB.
	 */
	private @Nullable DataSize maxResponseSize;

	/**
	 * Most bytes one streamed attempt may send in all; past it the attempt fails as a malformed
	 * answer (retried before the first token, a broken stream after it), so that a faulty provider
	 * cannot grow memory without bound. Default 64MB.
	 */
	private @Nullable DataSize maxStreamSize;

	/**
	 * Most server-sent events (keep-alive comments included) one streamed attempt may send; past it
	 * the attempt fails as a malformed answer. Default 200000.
	 */
	private @Nullable Long maxStreamEvents;

	/** The endpoint's circuit breaker (Resilience4j, count-based window). */
	@NestedConfigurationProperty
	private final CircuitBreaker circuitBreaker = new CircuitBreaker();

	/** Retries of one endpoint, the single place that retries. */
	@NestedConfigurationProperty
	private final RetryProperties retry = new RetryProperties();

	/** The endpoint's bulkhead: a cap on its concurrent calls. */
	@NestedConfigurationProperty
	private final Bulkhead bulkhead = new Bulkhead();

	/** The provider's rate limits on the endpoint's key, when known; learned from its headers too. */
	@NestedConfigurationProperty
	private final RateLimits rateLimits = new RateLimits();

	/** How a hang is told from the endpoint's own first-token times, before first-token-timeout. */
	@NestedConfigurationProperty
	private final Liveness liveness = new Liveness();

	public @Nullable Duration getTimeout() {
		return this.timeout;
	}

	public void setTimeout(@Nullable Duration timeout) {
		this.timeout = timeout;
	}

	public @Nullable Duration getConnectTimeout() {
		return this.connectTimeout;
	}

	public void setConnectTimeout(@Nullable Duration connectTimeout) {
		this.connectTimeout = connectTimeout;
	}

	public @Nullable Duration getFirstTokenTimeout() {
		return this.firstTokenTimeout;
	}

	public void setFirstTokenTimeout(@Nullable Duration firstTokenTimeout) {
		this.firstTokenTimeout = firstTokenTimeout;
	}

	public @Nullable Duration getStreamIdleTimeout() {
		return this.streamIdleTimeout;
	}

	public void setStreamIdleTimeout(@Nullable Duration streamIdleTimeout) {
		this.streamIdleTimeout = streamIdleTimeout;
	}

	public @Nullable Boolean getUpstreamStreaming() {
		return this.upstreamStreaming;
	}

	public void setUpstreamStreaming(@Nullable Boolean upstreamStreaming) {
		this.upstreamStreaming = upstreamStreaming;
	}

	public @Nullable DataSize getMaxResponseSize() {
		return this.maxResponseSize;
	}

	public void setMaxResponseSize(@Nullable DataSize maxResponseSize) {
		this.maxResponseSize = maxResponseSize;
	}

	public @Nullable DataSize getMaxStreamSize() {
		return this.maxStreamSize;
	}

	public void setMaxStreamSize(@Nullable DataSize maxStreamSize) {
		this.maxStreamSize = maxStreamSize;
	}

	public @Nullable Long getMaxStreamEvents() {
		return this.maxStreamEvents;
	}

	public void setMaxStreamEvents(@Nullable Long maxStreamEvents) {
		this.maxStreamEvents = maxStreamEvents;
	}

	public CircuitBreaker getCircuitBreaker() {
		return this.circuitBreaker;
	}

	public RetryProperties getRetry() {
		return this.retry;
	}

	public Bulkhead getBulkhead() {
		return this.bulkhead;
	}

	public Liveness getLiveness() {
		return this.liveness;
	}

	public RateLimits getRateLimits() {
		return this.rateLimits;
	}

	/** The provider's rate limits on the key. */
	public static class RateLimits {

		/**
		 * Requests a minute the provider allows the key; a call past them goes on down the route
		 * without being sent. 0 when not known. Counted per replica. Default 0.
		 */
		private @Nullable Long requestsPerMinute;

		/**
		 * Tokens (prompt and completion) a minute the provider allows the key; a call whose estimate
		 * does not fit goes on down the route without being sent. 0 when not known. Counted per
		 * replica. Default 0.
		 */
		private @Nullable Long tokensPerMinute;

		public @Nullable Long getRequestsPerMinute() {
			return this.requestsPerMinute;
		}

		public void setRequestsPerMinute(@Nullable Long requestsPerMinute) {
			this.requestsPerMinute = requestsPerMinute;
		}

		public @Nullable Long getTokensPerMinute() {
			return this.tokensPerMinute;
		}

		public void setTokensPerMinute(@Nullable Long tokensPerMinute) {
			this.tokensPerMinute = tokensPerMinute;
		}

	}

	/** Circuit breaker settings. */
	public static class CircuitBreaker {

		/** Number of most recent calls the failure rate is computed over (count-based window). Default 20. */
		private @Nullable Integer slidingWindowSize;

		/**
		 * Calls the window must hold before the failure rate is computed; until then the breaker
		 * stays closed. At most sliding-window-size. Default 20, or sliding-window-size when that is
		 * smaller.
		 */
		private @Nullable Integer minimumNumberOfCalls;

		/** Failure rate, in percent (0 to 100 exclusive of 0), at or above which the breaker opens. Default 50. */
		private @Nullable Float failureRateThreshold;

		/** How long the breaker stays open before it lets probes through. Default 30s. */
		private @Nullable Duration waitDurationInOpenState;

		/**
		 * Probe calls let through while half-open; with 3, two successes close the breaker and two
		 * failures reopen it. Default 3.
		 */
		private @Nullable Integer permittedCallsInHalfOpenState;

		/** A call slower than this counts as slow. Default 60s. */
		private @Nullable Duration slowCallDurationThreshold;

		/** Slow-call rate, in percent, at or above which the breaker opens. Default 100. */
		private @Nullable Float slowCallRateThreshold;

		/**
		 * Who sends the half-open probes: synthetic, the library itself (a minimal request: the
		 * endpoint's model, one short user message, max tokens 1) as soon as the open state's wait has
		 * passed, while users' calls go on to the next endpoint until the breaker has closed; or
		 * requests, users' calls once the wait has passed. Default synthetic.
		 */
		private EndpointSettings.@Nullable Probe probe;

		/**
		 * How long the closed breaker may hold an attempt's outcome after it ended, waiting for the
		 * attempts that started before it, so that its window holds calls in the order they started:
		 * when many calls start at once, the failures that come back at once (a 500) would otherwise
		 * fill the window before the slower successes that started with them. An outage still opens
		 * the breaker, at most this late. 0 records each outcome as it ends. Default 5s.
		 */
		private @Nullable Duration startOrderWait;

		public @Nullable Duration getStartOrderWait() {
			return this.startOrderWait;
		}

		public void setStartOrderWait(@Nullable Duration startOrderWait) {
			this.startOrderWait = startOrderWait;
		}

		public EndpointSettings.@Nullable Probe getProbe() {
			return this.probe;
		}

		public void setProbe(EndpointSettings.@Nullable Probe probe) {
			this.probe = probe;
		}

		public @Nullable Integer getSlidingWindowSize() {
			return this.slidingWindowSize;
		}

		public void setSlidingWindowSize(@Nullable Integer slidingWindowSize) {
			this.slidingWindowSize = slidingWindowSize;
		}

		public @Nullable Integer getMinimumNumberOfCalls() {
			return this.minimumNumberOfCalls;
		}

		public void setMinimumNumberOfCalls(@Nullable Integer minimumNumberOfCalls) {
			this.minimumNumberOfCalls = minimumNumberOfCalls;
		}

		public @Nullable Float getFailureRateThreshold() {
			return this.failureRateThreshold;
		}

		public void setFailureRateThreshold(@Nullable Float failureRateThreshold) {
			this.failureRateThreshold = failureRateThreshold;
		}

		public @Nullable Duration getWaitDurationInOpenState() {
			return this.waitDurationInOpenState;
		}

		public void setWaitDurationInOpenState(@Nullable Duration waitDurationInOpenState) {
			this.waitDurationInOpenState = waitDurationInOpenState;
		}

		public @Nullable Integer getPermittedCallsInHalfOpenState() {
			return this.permittedCallsInHalfOpenState;
		}

		public void setPermittedCallsInHalfOpenState(@Nullable Integer permittedCallsInHalfOpenState) {
			this.permittedCallsInHalfOpenState = permittedCallsInHalfOpenState;
		}

		public @Nullable Duration getSlowCallDurationThreshold() {
			return this.slowCallDurationThreshold;
		}

		public void setSlowCallDurationThreshold(@Nullable Duration slowCallDurationThreshold) {
			this.slowCallDurationThreshold = slowCallDurationThreshold;
		}

		public @Nullable Float getSlowCallRateThreshold() {
			return this.slowCallRateThreshold;
		}

		public void setSlowCallRateThreshold(@Nullable Float slowCallRateThreshold) {
			this.slowCallRateThreshold = slowCallRateThreshold;
		}

	}

	/** Bulkhead settings. */
	public static class Bulkhead {

		/** Calls in flight to the endpoint at once; a call past it falls back at once. Default 50. */
		private @Nullable Integer maxConcurrentCalls;

		/**
		 * How long a call may wait for a free permit. Keep 0 on event-loop threads, where waiting
		 * blocks the loop. Default 0ms.
		 */
		private @Nullable Duration maxWait;

		/**
		 * How long a call that another endpoint's opening breaker released to this one may wait for
		 * a free slot, holding no thread (it looks again every 10ms), within what is left of its
		 * deadline, rather than be refused and degrade: the burst of calls an opening releases is
		 * absorbed as this endpoint's own calls end. 0ms refuses them at once. Default 2s.
		 */
		private @Nullable Duration releasedCallsWait;

		public @Nullable Duration getReleasedCallsWait() {
			return this.releasedCallsWait;
		}

		public void setReleasedCallsWait(@Nullable Duration releasedCallsWait) {
			this.releasedCallsWait = releasedCallsWait;
		}

		public @Nullable Integer getMaxConcurrentCalls() {
			return this.maxConcurrentCalls;
		}

		public void setMaxConcurrentCalls(@Nullable Integer maxConcurrentCalls) {
			this.maxConcurrentCalls = maxConcurrentCalls;
		}

		public @Nullable Duration getMaxWait() {
			return this.maxWait;
		}

		public void setMaxWait(@Nullable Duration maxWait) {
			this.maxWait = maxWait;
		}

	}

	/**
	 * How a hang is told from an endpoint's own first-token times.
	 */
	public static class Liveness {

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

}
