package dev.llmresilience.springai;

import java.util.Arrays;
import java.util.List;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.SpringAiProperties;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmAutoConfiguration;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.UpstreamFailures;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.model.tool.ToolCallingManager;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.env.Environment;

/**
 * Spring AI integration, when {@code spring-ai-model} is on the class path: the gateway as the
 * ChatModel bean {@code llmGatewayChatModel}, and the {@code spring-ai} protocol that makes a
 * Spring AI ChatModel bean an endpoint.
 */
@AutoConfiguration(after = LlmAutoConfiguration.class,
		afterName = "org.springframework.ai.model.tool.autoconfigure.ToolCallingAutoConfiguration")
@ConditionalOnClass(ChatModel.class)
@EnableConfigurationProperties(SpringAiProperties.class)
public final class SpringAiAutoConfiguration {

	private static final Log logger = LogFactory.getLog(SpringAiAutoConfiguration.class);

	@Bean
	@ConditionalOnMissingBean(name = "llmSpringAiClientFactory")
	@ConditionalOnBean(UpstreamFailures.class)
	SpringAiClientFactory llmSpringAiClientFactory(ListableBeanFactory beans, UpstreamFailures failures,
			Environment environment) {
		return new SpringAiClientFactory((endpoint, name) -> {
			warnIfTheModelRetries(endpoint, environment);
			return chatModel(beans, endpoint, name);
		}, failures);
	}

	private static ChatModel chatModel(ListableBeanFactory beans, String endpoint, String name) {
		String property = (endpoint.contains(".") ? "llm.endpoints[" + endpoint + "]" : "llm.endpoints." + endpoint)
				+ ".chat-model-bean";
		List<String> models = Arrays.stream(beans.getBeanNamesForType(ChatModel.class, true, false))
			.filter((bean) -> !bean.equals(SpringAiProperties.GATEWAY_CHAT_MODEL))
			.toList();
		if (!beans.containsBean(name) || !beans.isTypeMatch(name, ChatModel.class)) {
			throw new LlmConfigurationException(property, "names no Spring AI ChatModel bean ('" + name + "')",
					models.isEmpty() ? "Add a Spring AI model starter (e.g. spring-ai-starter-model-anthropic) or declare a ChatModel bean."
							: "Use one of the ChatModel beans " + models + ".");
		}
		if (beans.isTypeMatch(name, LlmGatewayChatModel.class)) {
			throw new LlmConfigurationException(property, "names the gateway's own ChatModel ('" + name
					+ "'): the endpoint would call the gateway, which calls the endpoint",
					"Name the ChatModel of a provider" + (models.isEmpty() ? "." : ", one of " + models + "."));
		}
		return beans.getBean(name, ChatModel.class);
	}

	private static void warnIfTheModelRetries(String endpoint, Environment environment) {
		for (String key : SpringAiRetryDefaults.RETRIES_OFF.keySet()) {
			Integer retries = environment.getProperty(key, Integer.class);
			if (retries != null && retries > 0) {
				logger.warn("LLM endpoint '" + endpoint + "' is a Spring AI model, and " + key + "=" + retries
						+ ": it retries inside the endpoint's circuit breaker and retry, multiplying attempts. Set " + key
						+ "=0 to let the endpoint's retry decide.");
			}
		}
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBean({ LlmGateway.class, EndpointRegistry.class })
	@ConditionalOnBooleanProperty(name = "llm.spring-ai.chat-model.enabled", matchIfMissing = true)
	@ConditionalOnBooleanProperty(name = "llm.spring-ai.chat-model.primary", matchIfMissing = true)
	static class PrimaryGatewayChatModel {

		@Bean(SpringAiProperties.GATEWAY_CHAT_MODEL)
		@Primary
		@ConditionalOnMissingBean(name = SpringAiProperties.GATEWAY_CHAT_MODEL)
		LlmGatewayChatModel llmGatewayChatModel(LlmGateway gateway, EndpointRegistry endpoints,
				ObjectProvider<ToolCallingManager> toolCallingManager, SpringAiProperties properties) {
			return gatewayChatModel(gateway, endpoints, toolCallingManager, properties);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBean({ LlmGateway.class, EndpointRegistry.class })
	@ConditionalOnBooleanProperty(name = "llm.spring-ai.chat-model.enabled", matchIfMissing = true)
	@ConditionalOnBooleanProperty(name = "llm.spring-ai.chat-model.primary", havingValue = false)
	static class SecondaryGatewayChatModel {

		@Bean(SpringAiProperties.GATEWAY_CHAT_MODEL)
		@ConditionalOnMissingBean(name = SpringAiProperties.GATEWAY_CHAT_MODEL)
		LlmGatewayChatModel llmGatewayChatModel(LlmGateway gateway, EndpointRegistry endpoints,
				ObjectProvider<ToolCallingManager> toolCallingManager, SpringAiProperties properties) {
			return gatewayChatModel(gateway, endpoints, toolCallingManager, properties);
		}

	}

	private static LlmGatewayChatModel gatewayChatModel(LlmGateway gateway, EndpointRegistry endpoints,
			ObjectProvider<ToolCallingManager> toolCallingManager, SpringAiProperties properties) {
		return new LlmGatewayChatModel(gateway, endpoints,
				toolCallingManager.getIfAvailable(() -> ToolCallingManager.builder().build()),
				properties.getChatModel().isBusyAsError());
	}

}
