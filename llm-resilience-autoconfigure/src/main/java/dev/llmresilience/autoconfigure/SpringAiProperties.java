package dev.llmresilience.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;

/**
 * Spring AI integration, under {@code llm.spring-ai}: the gateway as a Spring AI ChatModel, and
 * Spring AI ChatModel beans as endpoints ({@code protocol: spring-ai}).
 */
@ConfigurationProperties("llm.spring-ai")
public class SpringAiProperties {

	/**
	 * When an endpoint has protocol spring-ai, default spring.ai.retry.max-attempts and
	 * spring.ai.openai.max-retries to 0, so that the endpoint's retry is the one that decides. A value
	 * set by the application still wins (and is warned about at start-up).
	 */
	private boolean disableModelRetries = true;

	/** The gateway as a Spring AI ChatModel. */
	@NestedConfigurationProperty
	private final ChatModel chatModel = new ChatModel();

	public boolean isDisableModelRetries() {
		return this.disableModelRetries;
	}

	public void setDisableModelRetries(boolean disableModelRetries) {
		this.disableModelRetries = disableModelRetries;
	}

	public ChatModel getChatModel() {
		return this.chatModel;
	}

	/** The bean llmGatewayChatModel. */
	public static class ChatModel {

		/** Whether the gateway is a Spring AI ChatModel bean, llmGatewayChatModel. */
		private boolean enabled = true;

		/**
		 * Whether llmGatewayChatModel is the primary ChatModel, the one ChatClient.Builder and an
		 * injected ChatModel get. Set to false when the application marks another one primary.
		 */
		private boolean primary = true;

		/** Raise a TransientAiException instead of answering with llm.gateway.busy-message when nothing can answer now. */
		private boolean busyAsError = false;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public boolean isPrimary() {
			return this.primary;
		}

		public void setPrimary(boolean primary) {
			this.primary = primary;
		}

		public boolean isBusyAsError() {
			return this.busyAsError;
		}

		public void setBusyAsError(boolean busyAsError) {
			this.busyAsError = busyAsError;
		}

	}

}
