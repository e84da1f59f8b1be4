package dev.llmresilience.autoconfigure;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Configuration of llm-resilience, under {@code llm}.
 */
@ConfigurationProperties("llm")
public class LlmProperties {

	/** Whether the starter configures a gateway at all. */
	private boolean enabled = true;

	/** Resilience settings applied to every endpoint that does not set them itself. */
	@NestedConfigurationProperty
	private final ResilienceProperties defaults = new ResilienceProperties();

	/** The model endpoints, by name. Each is one circuit-breaker bucket. */
	private Map<String, EndpointProperties> endpoints = new LinkedHashMap<>();

	/**
	 * Named routes: the endpoints tried in order. Without a "default" route, "default" holds every
	 * enabled endpoint by priority.
	 */
	private Map<String, List<String>> routes = new LinkedHashMap<>();

	/** How a gateway call degrades. */
	@NestedConfigurationProperty
	private final Gateway gateway = new Gateway();

	/** The "llm" health contributor. */
	@NestedConfigurationProperty
	private final Health health = new Health();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public ResilienceProperties getDefaults() {
		return this.defaults;
	}

	public Map<String, EndpointProperties> getEndpoints() {
		return this.endpoints;
	}

	public void setEndpoints(Map<String, EndpointProperties> endpoints) {
		this.endpoints = endpoints;
	}

	public Map<String, List<String>> getRoutes() {
		return this.routes;
	}

	public void setRoutes(Map<String, List<String>> routes) {
		this.routes = routes;
	}

	public Gateway getGateway() {
		return this.gateway;
	}

	public Health getHealth() {
		return this.health;
	}

	/** Deferral settings. */
	public static class Deferral {

		/** Whether deferrable requests that nothing can answer now are queued (tier DEFERRED). */
		private boolean enabled = true;

		/** Wait before the first background attempt; each later one waits twice as long as the one before. */
		private Duration delay = Duration.ofMinutes(5);

		/** Background attempts before a deferred request fails. */
		private int maxAttempts = 3;

		/** Deferred requests held at once; past it the answer is BUSY. */
		private int capacity = 1000;

		/** How long the outcome of an ended deferred request can still be fetched by its ticket. */
		private Duration retention = Duration.ofHours(1);

		/** The content of a DEFERRED answer. */
		private String message = "Your request is queued and will be answered shortly.";

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getDelay() {
			return this.delay;
		}

		public void setDelay(Duration delay) {
			this.delay = delay;
		}

		public int getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(int maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public int getCapacity() {
			return this.capacity;
		}

		public void setCapacity(int capacity) {
			this.capacity = capacity;
		}

		public Duration getRetention() {
			return this.retention;
		}

		public void setRetention(Duration retention) {
			this.retention = retention;
		}

		public String getMessage() {
			return this.message;
		}

		public void setMessage(String message) {
			this.message = message;
		}

	}

	/** Call-volume guard settings. */
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

	/** Budget settings. */
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

	/** Last-good-answer cache settings. */
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

	/** Health settings. */
	public static class Health {

		/**
		 * Report DOWN while every endpoint of some route has an open breaker. Off by default: a
		 * provider outage should not take every replica out of the load balancer at once.
		 */
		private boolean downWhenRouteUnavailable = false;

		public boolean isDownWhenRouteUnavailable() {
			return this.downWhenRouteUnavailable;
		}

		public void setDownWhenRouteUnavailable(boolean downWhenRouteUnavailable) {
			this.downWhenRouteUnavailable = downWhenRouteUnavailable;
		}

	}

	/** Gateway settings. */
	public static class Gateway {

		/**
		 * Longest a whole gateway call may take, retries and fallbacks included; past it the answer is
		 * BUSY. For a stream: the longest wait for its first chunk.
		 */
		private Duration deadline = Duration.ofSeconds(90);

		/** The content of a BUSY answer. */
		private String busyMessage = "The service is busy right now. Please try again in a minute.";

		/** The content of the answer when every endpoint that answered blocked the request with its content filter. */
		private String contentFilteredMessage = "The request was blocked by the provider's content filter. Please rephrase it.";

		/** Raise LlmUnavailableException instead of returning a BUSY answer. */
		private boolean busyAsError = false;

		/** The deferred tier: deferrable requests wait in a queue and complete in the background. */
		@NestedConfigurationProperty
		private final Deferral deferral = new Deferral();

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

		public Deferral getDeferral() {
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

	}


}
