package dev.llmresilience.autoconfigure;

import java.time.Duration;
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

		/** Longest a whole gateway call may take, retries and fallbacks included; past it the answer is BUSY. */
		private Duration deadline = Duration.ofSeconds(90);

		/** The content of a BUSY answer. */
		private String busyMessage = "The service is busy right now. Please try again in a minute.";

		/** The content of the answer when every endpoint that answered blocked the request with its content filter. */
		private String contentFilteredMessage = "The request was blocked by the provider's content filter. Please rephrase it.";

		/** Raise LlmUnavailableException instead of returning a BUSY answer. */
		private boolean busyAsError = false;

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

	}


}
