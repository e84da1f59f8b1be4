package dev.llmresilience.autoconfigure;

import java.net.URI;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;

import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmAutoConfiguration;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.ClientSettings.InvalidOptionException;
import dev.llmresilience.protocol.ClientSettings.ProtocolOptions;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.protocol.LlmClientFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The keys of protocols {@code anthropic}, {@code azure-openai} and {@code openai-responses}: their
 * defaults, and a bad or missing value failing start-up with a message that names the property and
 * what to do, without the key; and those keys as a protocol of the application's own gets and
 * refuses them.
 */
class ProtocolConfigurationTests {

	private static final String API_KEY = "sk-protocol-config-secret-77";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class));

	@Test
	void anthropicEndpointStartsWithTheDefaultVersion() {
		this.contextRunner.withPropertyValues(anthropic()).run((context) -> {
			EndpointSettings settings = settings(context, "claude");
			assertThat(settings.upstream().protocol()).isEqualTo("anthropic");
			assertThat(settings.options().get(ProtocolOptions.ANTHROPIC_VERSION)).isEqualTo("2023-06-01");
			assertThat(settings.options().get(ProtocolOptions.DEPLOYMENT)).isNull();
			assertThat(settings.providerName()).isEqualTo("anthropic");
		});
	}

	@Test
	void azureEndpointStartsWithTheDefaultApiVersion() {
		this.contextRunner.withPropertyValues(azure("llm.endpoints.azure.deployment=gpt-4o-prod")).run((context) -> {
			EndpointSettings settings = settings(context, "azure");
			assertThat(settings.options().get(ProtocolOptions.DEPLOYMENT)).isEqualTo("gpt-4o-prod");
			assertThat(settings.options().get(ProtocolOptions.API_VERSION)).isEqualTo("2024-10-21");
			assertThat(settings.options().get(ProtocolOptions.ANTHROPIC_VERSION)).isNull();
			assertThat(settings.providerName()).isEqualTo("azure.ai.openai");
		});
	}

	@Test
	void responsesEndpointStartsAsAnOpenAiProviderWithNoOption() {
		this.contextRunner
			.withPropertyValues("llm.endpoints.resp.protocol=openai-responses",
					"llm.endpoints.resp.base-url=https://api.openai.com/v1", "llm.endpoints.resp.model=gpt-5")
			.run((context) -> {
				EndpointSettings settings = settings(context, "resp");
				assertThat(settings.upstream().protocol()).isEqualTo("openai-responses");
				assertThat(settings.options().get(ProtocolOptions.DEPLOYMENT)).isNull();
				assertThat(settings.providerName()).isEqualTo("openai");
			});
	}

	@Test
	void deploymentOnAResponsesEndpointIsRejected() {
		assertRejected(new String[] { "llm.endpoints.resp.protocol=openai-responses",
				"llm.endpoints.resp.base-url=https://api.openai.com/v1", "llm.endpoints.resp.model=gpt-5",
				"llm.endpoints.resp.deployment=gpt-5" }, "llm.endpoints.resp.deployment",
				"is set, but the protocol is 'openai-responses'", "Set llm.endpoints.resp.protocol=azure-openai");
	}

	@Test
	void openAiEndpointCarriesNoneOfTheOtherProtocolsValues() {
		this.contextRunner.withPropertyValues("llm.endpoints.main.base-url=http://localhost:9/v1",
				"llm.endpoints.main.model=gpt-4o").run((context) -> {
					EndpointSettings settings = settings(context, "main");
					assertThat(settings.options().get(ProtocolOptions.ANTHROPIC_VERSION)).isNull();
					assertThat(settings.options().get(ProtocolOptions.API_VERSION)).isNull();
				});
	}

	@Test
	void aProtocolOfTheApplicationGetsTheOptionsAsSet() {
		this.contextRunner.withBean("ownClients", OwnProtocol.class, OwnProtocol::new)
			.withPropertyValues("llm.endpoints.own.protocol=own", "llm.endpoints.own.base-url=http://localhost:9/v1",
					"llm.endpoints.own.model=m", "llm.endpoints.own.deployment=my-deployment",
					"llm.endpoints.own.api-version=2025-01-01-preview")
			.run((context) -> {
				ProtocolOptions options = settings(context, "own").options();
				assertThat(options.values()).containsExactlyInAnyOrderEntriesOf(Map.of(ProtocolOptions.ANTHROPIC_VERSION,
						"2023-06-01", ProtocolOptions.DEPLOYMENT, "my-deployment", ProtocolOptions.API_VERSION,
						"2025-01-01-preview"));
				assertThat(context.getBean(OwnProtocol.class).created).containsExactly(options);
			});
	}

	@Test
	void anOptionTheProtocolRefusesFailsStartUpNamingItsProperty() {
		this.contextRunner.withBean("ownClients", LlmClientFactory.class, () -> new OwnProtocol() {

			@Override
			public ProtocolOptions options(ProtocolOptions options, String prefix, URI baseUrl) {
				throw new InvalidOptionException(prefix + ProtocolOptions.DEPLOYMENT, "is set",
						"The own protocol has no deployments.");
			}

		}).withPropertyValues("llm.endpoints.own.protocol=own", "llm.endpoints.own.base-url=http://localhost:9/v1",
				"llm.endpoints.own.model=m", "llm.endpoints.own.deployment=d").run((context) -> {
					assertThat(context).hasFailed();
					assertThat(context.getStartupFailure()).rootCause()
						.isInstanceOfSatisfying(LlmConfigurationException.class, (failure) -> {
							assertThat(failure.getProperty()).isEqualTo("llm.endpoints.own.deployment");
							assertThat(failure.getMessage())
								.isEqualTo("llm.endpoints.own.deployment: is set. The own protocol has no deployments.");
						});
				});
	}

	@Test
	void missingDeploymentIsRejected() {
		assertRejected(azure(), "llm.endpoints.azure.deployment", "is missing",
				"Set it to the name of the model deployment in your Azure OpenAI resource");
	}

	@Test
	void deploymentThatIsNotAPathSegmentIsRejected() {
		assertRejected(azure("llm.endpoints.azure.deployment=gpt-4o/../admin"), "llm.endpoints.azure.deployment",
				"is 'gpt-4o/../admin', which is not a deployment name", "up to 64 letters, digits");
	}

	@ParameterizedTest
	@ValueSource(strings = { "latest", "2024-10", "2024-10-21-beta" })
	void apiVersionThatIsNotAnAzureVersionIsRejected(String version) {
		assertRejected(azure("llm.endpoints.azure.deployment=gpt-4o", "llm.endpoints.azure.api-version=" + version),
				"llm.endpoints.azure.api-version", "is '" + version + "', which is not an Azure OpenAI API version",
				"Use a version such as 2024-10-21 (the default) or 2025-01-01-preview");
	}

	@ParameterizedTest
	@ValueSource(strings = { "/openai/deployments/gpt-4o", "/openai/v1" })
	void azureBaseUrlWithAPathTheClientAddsItselfIsRejected(String path) {
		assertRejected(azure("llm.endpoints.azure.deployment=gpt-4o",
				"llm.endpoints.azure.base-url=https://my-resource.openai.azure.com" + path),
				"llm.endpoints.azure.base-url", "has the path '" + path + "'", "For Azure's v1 API (.../openai/v1) use protocol openai");
	}

	@Test
	void deploymentOnAnEndpointThatIsNotAzureIsRejected() {
		assertRejected(anthropic("llm.endpoints.claude.deployment=gpt-4o"), "llm.endpoints.claude.deployment",
				"is set, but the protocol is 'anthropic'", "Set llm.endpoints.claude.protocol=azure-openai");
	}

	@Test
	void anthropicVersionThatIsNotADateIsRejected() {
		assertRejected(anthropic("llm.endpoints.claude.anthropic-version=v1"), "llm.endpoints.claude.anthropic-version",
				"is 'v1', which is not an Anthropic API version", "such as 2023-06-01 (the default)");
	}

	@Test
	void missingBaseUrlIsExplainedInTheProtocolsTerms() {
		assertRejected(new String[] { "llm.endpoints.claude.protocol=anthropic", "llm.endpoints.claude.model=claude" },
				"llm.endpoints.claude.base-url", "is missing",
				"Set it to the Anthropic API's base URL, e.g. llm.endpoints.claude.base-url=https://api.anthropic.com/v1.");
		assertRejected(new String[] { "llm.endpoints.azure.protocol=azure-openai", "llm.endpoints.azure.model=gpt-4o" },
				"llm.endpoints.azure.base-url", "is missing", "Set it to your Azure OpenAI resource's endpoint, e.g. "
						+ "llm.endpoints.azure.base-url=https://my-resource.openai.azure.com.");
	}

	/** A protocol of the application's own, which keeps the options as set and records what its clients got. */
	static class OwnProtocol implements LlmClientFactory {

		final List<ProtocolOptions> created = new CopyOnWriteArrayList<>();

		@Override
		public String protocol() {
			return "own";
		}

		@Override
		public LlmClient create(ClientSettings settings) {
			this.created.add(settings.options());
			return (request) -> Mono.empty();
		}

	}

	private static String[] anthropic(String... properties) {
		return with(new String[] { "llm.endpoints.claude.protocol=anthropic",
				"llm.endpoints.claude.base-url=https://api.anthropic.com/v1", "llm.endpoints.claude.model=claude-sonnet-4-5",
				"llm.endpoints.claude.api-key=" + API_KEY }, properties);
	}

	private static String[] azure(String... properties) {
		return with(new String[] { "llm.endpoints.azure.protocol=azure-openai",
				"llm.endpoints.azure.base-url=https://my-resource.openai.azure.com", "llm.endpoints.azure.model=gpt-4o",
				"llm.endpoints.azure.api-key=" + API_KEY }, properties);
	}

	private static String[] with(String[] endpoint, String[] properties) {
		return Stream.concat(Arrays.stream(endpoint), Arrays.stream(properties)).toArray(String[]::new);
	}

	private static EndpointSettings settings(ApplicationContext context, String name) {
		return context.getBean(EndpointRegistry.class).endpoint(name).settings();
	}

	private void assertRejected(String[] properties, String property, String problem, String action) {
		this.contextRunner.withPropertyValues(properties).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause().isInstanceOf(LlmConfigurationException.class);
			Throwable cause = context.getStartupFailure();
			while (cause.getCause() != null) {
				cause = cause.getCause();
			}
			LlmConfigurationException exception = (LlmConfigurationException) cause;
			assertThat(exception.getProperty()).isEqualTo(property);
			assertThat(exception.getMessage()).contains(problem).contains(action).doesNotContain(API_KEY);
			FailureAnalysis analysis = new LlmConfigurationFailureAnalyzer().analyze(context.getStartupFailure());
			assertThat(analysis.getDescription()).contains("'" + property + "'").contains(problem);
			assertThat(analysis.getAction()).contains(action).doesNotContain(API_KEY);
		});
	}

}
