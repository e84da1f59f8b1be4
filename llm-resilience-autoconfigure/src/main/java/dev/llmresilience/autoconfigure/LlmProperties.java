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
