package dev.llmresilience.autoconfigure;

import java.net.URI;

import org.jspecify.annotations.Nullable;

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

	/** The protocol of an endpoint served by a Spring AI ChatModel bean. */
	public static final String PROTOCOL = "spring-ai";

	/** The gateway's own ChatModel bean, which no endpoint may be (it would call itself). */
	public static final String GATEWAY_CHAT_MODEL = "llmGatewayChatModel";


	/**
	 * The endpoint's {@code chat-model-bean}, checked against its protocol.
	 * @param prefix the endpoint's property prefix, with its trailing dot
	 * @param endpoint the endpoint's properties
	 * @return the bean's name for a spring-ai endpoint, else {@code null}
	 */
	public static @Nullable String chatModelBean(String prefix, EndpointProperties endpoint) {
		String bean = endpoint.getChatModelBean();
		boolean springAi = PROTOCOL.equals(endpoint.getProtocol());
		if (springAi && (bean == null || bean.isBlank())) {
			throw new LlmConfigurationException(prefix + "chat-model-bean", "is missing while protocol=spring-ai",
					"Set it to the name of the Spring AI ChatModel bean that serves the endpoint, e.g. "
							+ prefix + "chat-model-bean=anthropicChatModel.");
		}
		if (!springAi && bean != null && !bean.isBlank()) {
			throw new LlmConfigurationException(prefix + "chat-model-bean", "is set, but protocol is '" + endpoint.getProtocol() + "'",
					"Set " + prefix + "protocol=spring-ai to have the bean serve the endpoint, or remove chat-model-bean.");
		}
		if (springAi && GATEWAY_CHAT_MODEL.equals(bean.trim())) {
			throw new LlmConfigurationException(prefix + "chat-model-bean", "is '" + GATEWAY_CHAT_MODEL
					+ "', the gateway's own ChatModel: the endpoint would call the gateway, which calls the endpoint",
					"Name the Spring AI ChatModel of a provider, e.g. openAiChatModel or anthropicChatModel.");
		}
		return springAi ? bean.trim() : null;
	}

	/**
	 * The base URL an endpoint without one is known by: {@code spring-ai:<bean>}, shown where a
	 * base URL is and never called.
	 * @param bean the ChatModel bean's name
	 * @return the URI
	 */
	public static URI baseUrl(String bean) {
		return URI.create(PROTOCOL + ":" + bean);
	}

}
