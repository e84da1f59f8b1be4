package dev.llmresilience.springai;

import java.util.Map;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.engine.LlmAutoConfiguration;
import dev.llmresilience.protocol.ClientSettings.ProtocolOptions;
import org.junit.jupiter.api.Test;

import org.springframework.ai.chat.model.ChatModel;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A {@code protocol: spring-ai} endpoint's configuration: a chat-model-bean is required, must name a
 * Spring AI ChatModel bean and not the gateway's own, needs Spring AI on the class path; and the
 * defaults that switch the model's own retries off (that Boot applies them to a running
 * application is shown by {@code SpringAiEndpointTests}).
 */
class SpringAiConfigurationTests {

	private static final String[] ENDPOINT = { "llm.endpoints.claude.protocol=spring-ai", "llm.endpoints.claude.model=claude" };

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class, SpringAiAutoConfiguration.class));

	@Test
	void aSpringAiEndpointNeedsAChatModelBean() {
		assertRejected(this.contextRunner.withPropertyValues(ENDPOINT), "llm.endpoints.claude.chat-model-bean",
				"is missing while protocol=spring-ai");
	}

	@Test
	void aChatModelBeanNeedsTheSpringAiProtocol() {
		assertRejected(this.contextRunner.withPropertyValues("llm.endpoints.main.base-url=http://localhost:9/v1",
				"llm.endpoints.main.model=m", "llm.endpoints.main.chat-model-bean=someModel"),
				"llm.endpoints.main.chat-model-bean", "is set, but protocol is 'openai'");
	}

	@Test
	void theGatewaysOwnChatModelCannotBeAnEndpoint() {
		assertRejected(this.contextRunner.withPropertyValues(ENDPOINT)
			.withPropertyValues("llm.endpoints.claude.chat-model-bean=llmGatewayChatModel"),
				"llm.endpoints.claude.chat-model-bean", "the gateway's own ChatModel");
	}

	@Test
	void aBeanThatIsNoChatModelIsRejectedListingTheChatModels() {
		assertRejected(this.contextRunner.withPropertyValues(ENDPOINT)
			.withPropertyValues("llm.endpoints.claude.chat-model-bean=nope")
			.withBean("vendorChatModel", ChatModel.class, () -> (prompt) -> null), "llm.endpoints.claude.chat-model-bean",
				"names no Spring AI ChatModel bean ('nope')", "[vendorChatModel]");
	}

	@Test
	void theSpringAiProtocolNeedsSpringAi() {
		assertRejected(this.contextRunner.withClassLoader(new FilteredClassLoader(ChatModel.class))
			.withPropertyValues(ENDPOINT)
			.withPropertyValues("llm.endpoints.claude.chat-model-bean=vendorChatModel"), "llm.endpoints.claude.protocol",
				"is 'spring-ai', which is not supported", "[anthropic, azure-openai, openai, openai-responses]");
	}

	@Test
	void aNamedChatModelServesTheEndpoint() {
		this.contextRunner.withPropertyValues(ENDPOINT)
			.withPropertyValues("llm.endpoints.claude.chat-model-bean=vendorChatModel")
			.withBean("vendorChatModel", ChatModel.class, () -> (prompt) -> null)
			.run((context) -> assertThat(context).hasNotFailed()
				.getBean(dev.llmresilience.engine.EndpointRegistry.class)
				.extracting((registry) -> registry.endpoint("claude").settings().options().get(ProtocolOptions.CHAT_MODEL_BEAN))
				.isEqualTo("vendorChatModel"));
	}

	@Test
	void theModelsRetriesDefaultToOffWhenAnEndpointIsASpringAiModel() {
		StandardEnvironment environment = environment(Map.of("llm.endpoints.claude.protocol", "spring-ai"));
		new SpringAiRetryDefaults().postProcessEnvironment(environment, new SpringApplication());
		assertThat(environment.getProperty("spring.ai.retry.max-attempts")).isEqualTo("0");
		assertThat(environment.getProperty("spring.ai.openai.max-retries")).isEqualTo("0");
		StandardEnvironment overridden = environment(Map.of("llm.endpoints.claude.protocol", "spring-ai",
				"spring.ai.retry.max-attempts", "2"));
		new SpringAiRetryDefaults().postProcessEnvironment(overridden, new SpringApplication());
		assertThat(overridden.getProperty("spring.ai.retry.max-attempts")).isEqualTo("2");
	}

	@Test
	void theModelsRetriesAreLeftAloneWithoutASpringAiEndpointOrWhenAskedTo() {
		StandardEnvironment plain = environment(Map.of("llm.endpoints.main.protocol", "openai"));
		new SpringAiRetryDefaults().postProcessEnvironment(plain, new SpringApplication());
		assertThat(plain.getProperty("spring.ai.retry.max-attempts")).isNull();
		StandardEnvironment declined = environment(Map.of("llm.endpoints.claude.protocol", "spring-ai",
				"llm.spring-ai.disable-model-retries", "false"));
		new SpringAiRetryDefaults().postProcessEnvironment(declined, new SpringApplication());
		assertThat(declined.getProperty("spring.ai.retry.max-attempts")).isNull();
	}

	private static StandardEnvironment environment(Map<String, Object> properties) {
		StandardEnvironment environment = new StandardEnvironment();
		environment.getPropertySources().addFirst(new MapPropertySource("test", properties));
		return environment;
	}

	private static void assertRejected(ApplicationContextRunner runner, String property, String... texts) {
		runner.run((context) -> {
			assertThat(context).hasFailed();
			Throwable cause = context.getStartupFailure();
			while (!(cause instanceof LlmConfigurationException) && cause.getCause() != null) {
				cause = cause.getCause();
			}
			assertThat(cause).isInstanceOf(LlmConfigurationException.class);
			assertThat(((LlmConfigurationException) cause).getProperty()).isEqualTo(property);
			assertThat(cause.getMessage()).contains(texts);
		});
	}

}
