package dev.llmresilience.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

import dev.llmresilience.engine.LlmAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.ByteArrayResource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key under {@code llm.} that nothing binds stops the start with its name, where it was set and
 * the nearest valid key, through the same failure report as any bad configuration.
 */
class UnknownKeysTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
		.withPropertyValues("llm.endpoints.primary.base-url=http://localhost:9/v1", "llm.endpoints.primary.model=m");

	@Test
	void misspelledEndpointKeyIsRejectedWithTheNearestValidKey() {
		assertRejected("llm.endpoints.primary.timout=5s", "llm.endpoints.primary.timout",
				"did you mean 'llm.endpoints.primary.timeout'", "Rename it to llm.endpoints.primary.timeout, or remove it.");
	}

	@Test
	void misspelledNestedDefaultsKeyIsRejectedWithTheNearestValidKey() {
		assertRejected("llm.defaults.circuit-breaker.failure-rate-treshold=40",
				"llm.defaults.circuit-breaker.failure-rate-treshold",
				"did you mean 'llm.defaults.circuit-breaker.failure-rate-threshold'",
				"Rename it to llm.defaults.circuit-breaker.failure-rate-threshold");
	}

	@Test
	void misspelledGatewayKeyIsRejectedWithTheNearestValidKey() {
		assertRejected("llm.gateway.dedline=5s", "llm.gateway.dedline", "did you mean 'llm.gateway.deadline'",
				"Rename it to llm.gateway.deadline");
	}

	@Test
	void endpointNamedWithADotGetsItsSuggestionInBrackets() {
		assertRejected(new String[] { "llm.endpoints[gpt-4.1].base-url=http://localhost:9/v1",
				"llm.endpoints[gpt-4.1].modle=gpt-4.1" }, "llm.endpoints[gpt-4.1].modle",
				"did you mean 'llm.endpoints[gpt-4.1].model'", "Rename it to llm.endpoints[gpt-4.1].model");
	}

	@Test
	void keyFarFromAnyValidOneListsTheKeysValidThere() {
		assertRejected("llm.gateway.xyzzy=1", "llm.gateway.xyzzy", "is not a key of llm-resilience",
				"Remove it, or use one of the keys valid there: ");
		this.contextRunner.withPropertyValues("llm.gateway.xyzzy=1").run((context) -> {
			String action = ((LlmConfigurationException) rootCause(context.getStartupFailure())).getAction();
			assertThat(action).contains("deadline", "busy-message", "deferral.delay", "fallback-cache.ttl")
				.doesNotContain("llm.endpoints");
		});
	}

	@Test
	void keyFromAYamlFileNamesTheFileAndLine() {
		this.contextRunner.withInitializer((context) -> context.getEnvironment()
			.getPropertySources()
			.addFirst(yaml("""
					llm:
					  endpoints:
					    primary:
					      timout: 5s
					""")))
			.run((context) -> {
				assertThat(context).hasFailed();
				LlmConfigurationException exception = (LlmConfigurationException) rootCause(context.getStartupFailure());
				assertThat(exception.getProperty()).isEqualTo("llm.endpoints.primary.timout");
				assertThat(exception.getProblem()).contains("(set in ").contains("application-test.yml").contains("4:");
			});
	}

	@Test
	void twoTyposAreReportedAtOnceEachWithWhereItWasSetAndTheKeyMeant() {
		this.contextRunner.withInitializer((context) -> context.getEnvironment()
			.getPropertySources()
			.addFirst(yaml("""
					llm:
					  endpoints:
					    primary:
					      timout: 5s
					  gateway:
					    dedline: 5s
					""")))
			.run((context) -> {
				assertThat(context).hasFailed();
				FailureAnalysis analysis = new LlmConfigurationFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).startsWith(
						"Invalid llm-resilience configuration: property 'llm.endpoints.primary.timout' is not a key of "
								+ "llm-resilience (set in ")
					.containsPattern("application-test.yml.* - 4:\\d+\\); did you mean 'llm.endpoints.primary.timeout'\\. "
							+ "Nor is 'llm.gateway.dedline' \\(set in .*application-test.yml.* - 6:\\d+\\); did you mean "
							+ "'llm.gateway.deadline'\\.$");
				assertThat(analysis.getAction()).startsWith("llm.endpoints.primary.timout: Rename it to "
						+ "llm.endpoints.primary.timeout, or remove it. llm.gateway.dedline: Rename it to llm.gateway.deadline, "
						+ "or remove it.");
			});
	}

	@Test
	void aRouteNamingAMisspeltEndpointSaysWhereAndTheEndpointMeant() {
		this.contextRunner.withInitializer((context) -> context.getEnvironment()
			.getPropertySources()
			.addFirst(yaml("""
					llm:
					  endpoints:
					    backup:
					      base-url: http://localhost:9/v1
					      model: m
					  routes:
					    default: [primary, bakup]
					""")))
			.run((context) -> {
				assertThat(context).hasFailed();
				FailureAnalysis analysis = new LlmConfigurationFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis.getDescription())
					.startsWith("Invalid llm-resilience configuration: property 'llm.routes.default' names unknown endpoint "
							+ "'bakup' (set in ")
					.containsPattern("application-test.yml.* - 7:\\d+\\); did you mean 'backup'\\.$");
				assertThat(analysis.getAction())
					.startsWith("Write backup, or use one of the configured endpoints [")
					.endsWith("], or configure it under llm.endpoints.bakup.");
			});
	}

	@Test
	void theActionSaysWhereEveryKeyIsInTheJarAUserHas() {
		assertRejected("llm.gateway.dedline=5s", "llm.gateway.dedline", "did you mean 'llm.gateway.deadline'",
				"Every key, with its description, is in META-INF/spring-configuration-metadata.json of the "
						+ "llm-resilience-autoconfigure jar, which IDEs complete from.");
		this.contextRunner.withPropertyValues("llm.gateway.dedline=5s")
			.run((context) -> assertThat(((LlmConfigurationException) rootCause(context.getStartupFailure())).getAction())
				.doesNotContain("docs/"));
	}

	@Test
	void validKeysInRelaxedFormsStart() {
		this.contextRunner
			.withPropertyValues("llm.endpoints.primary.baseUrl=http://localhost:9/v1",
					"llm.defaults.circuitBreaker.slidingWindowSize=10", "llm.endpoints.primary.headers.X-Org=org-1",
					"llm.endpoints.primary.price.input-per-million=1", "llm.routes.cheap[0]=primary",
					"llm.endpoints.primary.api_key_required=false", "llm.health.down-when-route-unavailable=true")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void keysOfAnotherPropertiesBeanUnderLlmAreLeftToIt() {
		this.contextRunner.withUserConfiguration(OtherPropertiesConfiguration.class)
			.withPropertyValues("llm.extension.colour=blue")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(ExtensionProperties.class).getColour()).isEqualTo("blue");
			});
	}

	private void assertRejected(String property, String name, String problem, String action) {
		assertRejected(new String[] { property }, name, problem, action);
	}

	private void assertRejected(String[] properties, String name, String problem, String action) {
		this.contextRunner.withPropertyValues(properties).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			assertThat(failure).rootCause().isInstanceOf(LlmConfigurationException.class);
			LlmConfigurationException exception = (LlmConfigurationException) rootCause(failure);
			assertThat(exception.getProperty()).isEqualTo(name);
			FailureAnalysis analysis = new LlmConfigurationFailureAnalyzer().analyze(failure);
			assertThat(analysis.getDescription()).startsWith("Invalid llm-resilience configuration: property '" + name + "' ")
				.contains(problem);
			assertThat(analysis.getAction()).contains(action);
		});
	}

	private static Throwable rootCause(Throwable failure) {
		Throwable cause = failure;
		while (cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static org.springframework.core.env.PropertySource<?> yaml(String text) {
		try {
			ByteArrayResource resource = new ByteArrayResource(text.getBytes(StandardCharsets.UTF_8), "application-test.yml") {
				@Override
				public String getFilename() {
					return "application-test.yml";
				}
			};
			return new YamlPropertySourceLoader().load("application-test.yml", resource).get(0);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(ExtensionProperties.class)
	static class OtherPropertiesConfiguration {

	}

	@ConfigurationProperties("llm.extension")
	static class ExtensionProperties {

		private String colour = "red";

		public String getColour() {
			return this.colour;
		}

		public void setColour(String colour) {
			this.colour = colour;
		}

	}

}
