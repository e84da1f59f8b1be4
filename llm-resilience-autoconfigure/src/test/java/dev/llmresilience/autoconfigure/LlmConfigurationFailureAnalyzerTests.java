package dev.llmresilience.autoconfigure;

import dev.llmresilience.engine.LlmAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Tests for {@link LlmConfigurationFailureAnalyzer}: what a user reads when {@code llm.*}
 * configuration stops the application from starting.
 */
@ExtendWith(OutputCaptureExtension.class)
class LlmConfigurationFailureAnalyzerTests {

	private static final String API_KEY = "sk-analyzer-secret-31337";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class));

	@Test
	void describesTheBadPropertyAndTheFix() {
		this.contextRunner.withPropertyValues("llm.endpoints.gpt-4o.model=gpt-4o", "llm.endpoints.gpt-4o.api-key=" + API_KEY)
			.run((context) -> {
				FailureAnalysis analysis = new LlmConfigurationFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis.getDescription())
					.isEqualTo("Invalid llm-resilience configuration: property 'llm.endpoints.gpt-4o.base-url' is missing.");
				assertThat(analysis.getAction()).isEqualTo(
						"Set it to the provider's OpenAI-compatible base URL, e.g. llm.endpoints.gpt-4o.base-url=https://api.openai.com/v1.");
				assertThat(analysis.getCause()).isInstanceOf(LlmConfigurationException.class);
			});
	}

	@Test
	void describesAnUnknownRouteMember() {
		this.contextRunner
			.withPropertyValues("llm.endpoints.gpt-4o.base-url=https://api.openai.com/v1",
					"llm.endpoints.gpt-4o.model=gpt-4o", "llm.endpoints.gpt-4o.api-key=" + API_KEY,
					"llm.routes.default=gpt-4o,deepseek")
			.run((context) -> {
				FailureAnalysis analysis = new LlmConfigurationFailureAnalyzer().analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).isEqualTo(
						"Invalid llm-resilience configuration: property 'llm.routes.default' names unknown endpoint 'deepseek' "
								+ "(set in \"llm.routes.default\" from property source \"test\").");
				assertThat(analysis.getAction())
					.isEqualTo("Use one of the configured endpoints [gpt-4o], or configure it under llm.endpoints.deepseek.");
			});
	}

	@Test
	void leavesOtherFailuresToOtherAnalyzers() {
		assertThat(new LlmConfigurationFailureAnalyzer().analyze(new IllegalStateException("unrelated"))).isNull();
	}

	@Test
	void applicationThatFailsToStartPrintsTheAnalysisWithoutTheKey(CapturedOutput output) {
		SpringApplication application = new SpringApplication(LlmApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		// also as an argument: src/test/resources/application.properties makes test applications reactive
		assertThatException().isThrownBy(() -> application.run("--spring.main.web-application-type=none",
				"--llm.endpoints.gpt-4o.base-url=ftp://example.com/v1",
				"--llm.endpoints.gpt-4o.model=gpt-4o", "--llm.endpoints.gpt-4o.api-key=" + API_KEY))
			.havingRootCause()
			.isInstanceOf(LlmConfigurationException.class);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Invalid llm-resilience configuration: property 'llm.endpoints.gpt-4o.base-url' is "
					+ "'ftp://example.com/v1', which is not an http(s) URL.")
			.contains("Use an absolute http:// or https:// URL with a host, e.g. https://api.openai.com/v1.")
			.doesNotContain(API_KEY);
	}

	@Test
	void apiKeyLeftAsAPlaceholderOfAnUnsetVariableStopsTheStartNamingTheEndpointAndTheVariable(CapturedOutput output) {
		SpringApplication application = new SpringApplication(LlmApplication.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(() -> application.run("--spring.main.web-application-type=none",
				"--llm.endpoints.gpt-4o.base-url=https://api.openai.com/v1", "--llm.endpoints.gpt-4o.model=gpt-4o",
				"--llm.endpoints.gpt-4o.api-key=${LLM_TEST_NEVER_SET_KEY}"))
			.havingRootCause()
			.isInstanceOf(LlmConfigurationException.class);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Invalid llm-resilience configuration: property 'llm.endpoints.gpt-4o.api-key' is the placeholder "
					+ "${LLM_TEST_NEVER_SET_KEY}, which nothing resolved: no environment variable or property "
					+ "LLM_TEST_NEVER_SET_KEY is set.")
			.contains("Set LLM_TEST_NEVER_SET_KEY where the application starts (e.g. export LLM_TEST_NEVER_SET_KEY=<your key>), "
					+ "or write ${LLM_TEST_NEVER_SET_KEY:} to start without a key");
	}

	@Test
	void placeholderWithADefaultOrOfASetPropertyStarts() {
		this.contextRunner
			.withPropertyValues("llm.endpoints.a.base-url=https://api.openai.com/v1", "llm.endpoints.a.model=gpt-4o",
					"llm.endpoints.a.api-key=${LLM_TEST_NEVER_SET_KEY:}", "llm.endpoints.b.base-url=https://api.openai.com/v1",
					"llm.endpoints.b.model=gpt-4o", "llm.endpoints.b.api-key=${test.key}", "test.key=" + API_KEY,
					"llm.endpoints.c.base-url=https://api.openai.com/v1", "llm.endpoints.c.model=gpt-4o",
					"llm.endpoints.c.enabled=false", "llm.endpoints.c.api-key=${LLM_TEST_NEVER_SET_KEY}")
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(LlmAutoConfiguration.class)
	static class LlmApplication {

	}

}
