package dev.llmresilience.springai;

import java.net.URI;
import java.util.function.BiFunction;

import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.ClientSettings.ProtocolOptions;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.protocol.LlmClientFactory;
import dev.llmresilience.protocol.UpstreamFailures;

import org.springframework.ai.chat.model.ChatModel;

/**
 * The {@code spring-ai} protocol: an endpoint whose calls go to a Spring AI {@link ChatModel} bean,
 * named by {@code llm.endpoints.<name>.chat-model-bean}, wrapped in the endpoint's retry, circuit
 * breaker and bulkhead like any other. The model's own retries are to be off (one place decides).
 */
final class SpringAiClientFactory implements LlmClientFactory {

	/** The protocol name of this client. */
	public static final String PROTOCOL = "spring-ai";

	private final BiFunction<String, String, ChatModel> models;

	private final UpstreamFailures failures;

	/**
	 * Create a factory.
	 * @param models finds the model of an endpoint: (endpoint name, bean name) to the bean; fails
	 * with a message that says what to configure when there is no such model
	 * @param failures what the provider's failures stand for
	 */
	public SpringAiClientFactory(BiFunction<String, String, ChatModel> models, UpstreamFailures failures) {
		this.models = models;
		this.failures = failures;
	}

	@Override
	public String protocol() {
		return PROTOCOL;
	}

	/**
	 * Keep the endpoint's {@code chat-model-bean} alone. It stands in for the base URL, so the
	 * auto-configuration checks it before any other key of the endpoint
	 * ({@code SpringAiProperties#chatModelBean}), and on every protocol, this one present or not.
	 * @param options what the endpoint set
	 * @param prefix the endpoint's property prefix, with its trailing dot
	 * @param baseUrl the endpoint's base URL, {@code spring-ai:<bean>}
	 * @return its {@code chat-model-bean}
	 */
	@Override
	public ProtocolOptions options(ProtocolOptions options, String prefix, URI baseUrl) {
		String bean = options.get(ProtocolOptions.CHAT_MODEL_BEAN);
		return (bean != null) ? ProtocolOptions.of(ProtocolOptions.CHAT_MODEL_BEAN, bean) : ProtocolOptions.NONE;
	}

	@Override
	public LlmClient create(ClientSettings settings) {
		String bean = settings.options().get(ProtocolOptions.CHAT_MODEL_BEAN);
		if (bean == null) {
			throw new IllegalArgumentException("Endpoint '" + settings.name() + "' has protocol spring-ai but no chat-model-bean");
		}
		return new SpringAiChatClient(settings, this.models.apply(settings.name(), bean), this.failures);
	}

}
