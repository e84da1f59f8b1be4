package dev.llmresilience.autoconfigure;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Gateway settings ({@code llm.gateway.*}): the deadline, the fallback tiers, the guards and hedging.
 */
public class GatewayProperties {

	/**
	 * Longest a whole gateway call may take, retries and fallbacks included; past it the answer is
	 * BUSY. For a stream: the longest wait for its first chunk.
	 */
	private Duration deadline = Duration.ofSeconds(90);

	/**
	 * Longest per-attempt timeout a ChatRequest may set for itself; a request asking for more is
	 * refused with LlmInvalidRequestException before any upstream call, so that no caller holds an
	 * endpoint's bulkhead permit and connection longer than this.
	 */
	private Duration maxRequestTimeout = Duration.ofMinutes(10);

	/**
	 * Longest deadline a ChatRequest may set for itself (for a stream: the whole stream); a
	 * request asking for more is refused with LlmInvalidRequestException before any upstream call.
	 */
	private Duration maxRequestDeadline = Duration.ofMinutes(30);

	/** The content of a BUSY answer. */
	private String busyMessage = "The service is busy right now. Please try again in a minute.";

	/** The content of the answer when every endpoint that answered blocked the request with its content filter. */
	private String contentFilteredMessage = "The request was blocked by the provider's content filter. Please rephrase it.";

	/** Raise LlmUnavailableException instead of returning a BUSY answer. */
	private boolean busyAsError = false;

	/**
	 * Gateway calls in flight at once, over all routes, on top of each endpoint's bulkhead; a call
	 * past it is refused at once (attempt outcome GATEWAY_FULL) and degrades: cached answer,
	 * deferral, BUSY. A stream counts until it ends. 0 switches the limit off.
	 */
	private int maxConcurrentCalls = 0;

	/**
	 * The part of each endpoint's capacity that batch calls (ChatRequest priority BATCH) may use, a
	 * fraction over 0 and at most 1: of its known request rate limit, else of its bulkhead's calls in
	 * flight. Past it a batch call goes to the route's next endpoint (attempt outcome
	 * CAPACITY_EXHAUSTED), then defers if deferrable, else is BUSY; interactive calls keep the rest.
	 * A rate limit's share is judged against what the key's window has left (with shared state, the
	 * fleet's); a bulkhead's is each replica's.
	 */
	private double batchShare = 0.5;

	/** The deferred tier: deferrable requests wait in a queue and complete in the background. */
	@NestedConfigurationProperty
	private final DeferralProperties deferral = new DeferralProperties();

	/** The runaway-loop guard over all upstream calls. */
	@NestedConfigurationProperty
	private final Guard guard = new Guard();

	/** The daily spending cap. */
	@NestedConfigurationProperty
	private final Budget budget = new Budget();

	/** The last-good-answer cache (tier CACHED). */
	@NestedConfigurationProperty
	private final FallbackCache fallbackCache = new FallbackCache();

	/** Hedged requests: a slow first token sends the same request to the route's next endpoint too. */
	@NestedConfigurationProperty
	private final HedgeProperties hedge = new HedgeProperties();

	public HedgeProperties getHedge() {
		return this.hedge;
	}

	public DeferralProperties getDeferral() {
		return this.deferral;
	}

	public Guard getGuard() {
		return this.guard;
	}

	public Budget getBudget() {
		return this.budget;
	}

	public FallbackCache getFallbackCache() {
		return this.fallbackCache;
	}

	/** How a streamed answer ({@code LlmGateway.stream}) survives a failure. */
	@NestedConfigurationProperty
	private final Stream stream = new Stream();

	public Duration getDeadline() {
		return this.deadline;
	}

	public void setDeadline(Duration deadline) {
		this.deadline = deadline;
	}

	public Duration getMaxRequestTimeout() {
		return this.maxRequestTimeout;
	}

	public void setMaxRequestTimeout(Duration maxRequestTimeout) {
		this.maxRequestTimeout = maxRequestTimeout;
	}

	public Duration getMaxRequestDeadline() {
		return this.maxRequestDeadline;
	}

	public void setMaxRequestDeadline(Duration maxRequestDeadline) {
		this.maxRequestDeadline = maxRequestDeadline;
	}

	public String getBusyMessage() {
		return this.busyMessage;
	}

	public void setBusyMessage(String busyMessage) {
		this.busyMessage = busyMessage;
	}

	public String getContentFilteredMessage() {
		return this.contentFilteredMessage;
	}

	public void setContentFilteredMessage(String contentFilteredMessage) {
		this.contentFilteredMessage = contentFilteredMessage;
	}

	public boolean isBusyAsError() {
		return this.busyAsError;
	}

	public void setBusyAsError(boolean busyAsError) {
		this.busyAsError = busyAsError;
	}

	public Stream getStream() {
		return this.stream;
	}

	public double getBatchShare() {
		return this.batchShare;
	}

	public void setBatchShare(double batchShare) {
		this.batchShare = batchShare;
	}

	public int getMaxConcurrentCalls() {
		return this.maxConcurrentCalls;
	}

	public void setMaxConcurrentCalls(int maxConcurrentCalls) {
		this.maxConcurrentCalls = maxConcurrentCalls;
	}

	/** Streaming settings of the gateway. */
	public static class Stream {

		/**
		 * After a stream failed mid-answer, continue the answer on the route's next endpoint: the text
		 * received so far is sent to it as an assistant message and only its continuation is streamed,
		 * marked FALLBACK. Off by default, because not every model continues a partial assistant
		 * message seamlessly; the stream then fails with LlmStreamInterruptedException, which carries
		 * the partial text.
		 */
		private boolean resumeOnFallback = false;

		public boolean isResumeOnFallback() {
			return this.resumeOnFallback;
		}

		public void setResumeOnFallback(boolean resumeOnFallback) {
			this.resumeOnFallback = resumeOnFallback;
		}

	}

	/** The call-volume guard, {@code llm.gateway.guard}: a cap on upstream attempts per hour. */
	public static class Guard {

		/**
		 * Upstream attempts allowed per hour over all endpoints (a fixed window, renewed every hour
		 * from start-up); past it calls get BUSY without touching any upstream. 0 switches it off.
		 */
		private int maxCallsPerHour = 0;

		public int getMaxCallsPerHour() {
			return this.maxCallsPerHour;
		}

		public void setMaxCallsPerHour(int maxCallsPerHour) {
			this.maxCallsPerHour = maxCallsPerHour;
		}

	}

	/** The daily budget, {@code llm.gateway.budget}: a cap on the cost of answers per day. */
	public static class Budget {

		/**
		 * Cost of answers allowed per day, in the currency of the endpoints' prices; once spent,
		 * calls get BUSY (DEFERRED if deferrable) until the day rolls over. 0 switches it off.
		 */
		private BigDecimal maxCostPerDay = BigDecimal.ZERO;

		/** Time zone in which a budget day starts. */
		private ZoneId zone = ZoneId.of("UTC");

		public BigDecimal getMaxCostPerDay() {
			return this.maxCostPerDay;
		}

		public void setMaxCostPerDay(BigDecimal maxCostPerDay) {
			this.maxCostPerDay = maxCostPerDay;
		}

		public ZoneId getZone() {
			return this.zone;
		}

		public void setZone(ZoneId zone) {
			this.zone = zone;
		}

	}

	/**
	 * The last-good-answer cache, {@code llm.gateway.fallback-cache} (tier CACHED).
	 */
	public static class FallbackCache {

		/** Whether an earlier answer to the same request is returned (tier CACHED) when nothing live can answer. */
		private boolean enabled = false;

		/** How long an answer may be served from the cache. */
		private Duration ttl = Duration.ofHours(1);

		/** Answers kept at most (in-memory cache only; with a CacheManager its own limits apply). */
		private long maxEntries = 10000;

		/** Name of the cache used when the application has a CacheManager. */
		private String cacheName = "llm-fallback";

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getTtl() {
			return this.ttl;
		}

		public void setTtl(Duration ttl) {
			this.ttl = ttl;
		}

		public long getMaxEntries() {
			return this.maxEntries;
		}

		public void setMaxEntries(long maxEntries) {
			this.maxEntries = maxEntries;
		}

		public String getCacheName() {
			return this.cacheName;
		}

		public void setCacheName(String cacheName) {
			this.cacheName = cacheName;
		}

	}

}
