package dev.llmresilience.autoconfigure;

import java.net.URI;

import org.jspecify.annotations.Nullable;

/**
 * What is particular to a {@code protocol: spring-ai} endpoint's settings: it names a ChatModel
 * bean instead of a base URL.
 */
final class SpringAiEndpoints {

	/** The protocol of an endpoint served by a Spring AI ChatModel bean. */
	static final String PROTOCOL = "spring-ai";

	/** The gateway's own ChatModel bean, which no endpoint may be (it would call itself). */
	static final String GATEWAY_CHAT_MODEL = "llmGatewayChatModel";

	private SpringAiEndpoints() {
	}

	/**
	 * The endpoint's {@code chat-model-bean}, checked against its protocol.
	 * @param prefix the endpoint's property prefix, with its trailing dot
	 * @param endpoint the endpoint's properties
	 * @return the bean's name for a spring-ai endpoint, else {@code null}
	 */
	static @Nullable String chatModelBean(String prefix, EndpointProperties endpoint) {
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
	static URI baseUrl(String bean) {
		return URI.create(PROTOCOL + ":" + bean);
	}

}
