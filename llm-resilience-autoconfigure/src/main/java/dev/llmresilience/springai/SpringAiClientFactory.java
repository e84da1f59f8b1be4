package dev.llmresilience.springai;

import java.util.function.BiFunction;

import dev.llmresilience.protocol.ClientSettings;
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

	@Override
	public LlmClient create(ClientSettings settings) {
		String bean = settings.chatModelBean();
		if (bean == null) {
			throw new IllegalArgumentException("Endpoint '" + settings.name() + "' has protocol spring-ai but no chat-model-bean");
		}
		return new SpringAiChatClient(settings, this.models.apply(settings.name(), bean), this.failures);
	}

}
