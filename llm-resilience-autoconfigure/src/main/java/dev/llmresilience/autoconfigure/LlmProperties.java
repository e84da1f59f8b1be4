package dev.llmresilience.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
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
	 * Named routes, each a list of endpoints tried in order (llm.routes.cheap=a,b), or an object:
	 * llm.routes.<name>.endpoints (the list; omitted, every enabled endpoint by priority),
	 * llm.routes.<name>.balance (priority, weighted or least-latency: which endpoint of equal
	 * priority goes first; default priority) and llm.routes.<name>.order (priority or
	 * cheapest-first; default priority). Without a "default" route, "default" holds every enabled
	 * endpoint by priority.
	 */
	private Map<String, RouteProperties> routes = new LinkedHashMap<>();

	/** How a gateway call degrades. */
	@NestedConfigurationProperty
	private final Gateway gateway = new Gateway();

	/** The "llm" health contributor. */
	@NestedConfigurationProperty
	private final HealthProperties health = new HealthProperties();

	/** How degraded each route's answers have been: a meter, health details and a WARN. */
	@NestedConfigurationProperty
	private final DegradationProperties degradation = new DegradationProperties();

	/** The live dashboard at /llm/dashboard. */
	@NestedConfigurationProperty
	private final DashboardProperties dashboard = new DashboardProperties();

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

	public Map<String, RouteProperties> getRoutes() {
		return this.routes;
	}

	public void setRoutes(Map<String, RouteProperties> routes) {
		this.routes = routes;
	}

	public Gateway getGateway() {
		return this.gateway;
	}

	public HealthProperties getHealth() {
		return this.health;
	}

	public DegradationProperties getDegradation() {
		return this.degradation;
	}

	public DashboardProperties getDashboard() {
		return this.dashboard;
	}

	/** Gateway settings. */
	public static class Gateway {

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

		/** The deferred tier: deferrable requests wait in a queue and complete in the background. */
		@NestedConfigurationProperty
		private final DeferralProperties deferral = new DeferralProperties();

		/** The runaway-loop guard over all upstream calls. */
		@NestedConfigurationProperty
		private final GuardProperties guard = new GuardProperties();

		/** The daily spending cap. */
		@NestedConfigurationProperty
		private final BudgetProperties budget = new BudgetProperties();

		/** The last-good-answer cache (tier CACHED). */
		@NestedConfigurationProperty
		private final FallbackCacheProperties fallbackCache = new FallbackCacheProperties();

		/** Hedged requests: a slow first token sends the same request to the route's next endpoint too. */
		@NestedConfigurationProperty
		private final HedgeProperties hedge = new HedgeProperties();

		public HedgeProperties getHedge() {
			return this.hedge;
		}

		public DeferralProperties getDeferral() {
			return this.deferral;
		}

		public GuardProperties getGuard() {
			return this.guard;
		}

		public BudgetProperties getBudget() {
			return this.budget;
		}

		public FallbackCacheProperties getFallbackCache() {
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

	}


}
