package dev.llmresilience.autoconfigure;

import java.util.List;

import dev.llmresilience.engine.LlmAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;

/**
 * What the log says at start-up: which endpoints and routes were resolved, in which order, and
 * which endpoint will be sent without a key, and a route's warning, once.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupSummaryTests {

	private static final String SECRET = "sk-summary-test-0123456789";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
		.withPropertyValues("llm.endpoints.primary.base-url=https://api.example.com/v1", "llm.endpoints.primary.model=big",
				"llm.endpoints.primary.api-key=" + SECRET, "llm.endpoints.backup.base-url=http://localhost:11434/v1",
				"llm.endpoints.backup.model=llama3.1", "llm.endpoints.backup.api-key-required=false");

	@Test
	void infoLineListsEndpointsAndTheRouteOrderAndExplainsATieBrokenByName(CapturedOutput output) {
		this.contextRunner.run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(lines(output, "INFO", "llm-resilience: ")).singleElement(STRING)
				.contains("llm-resilience: 2 endpoints: backup (model llama3.1 at localhost:11434, priority 0), "
						+ "primary (model big at api.example.com, priority 0)")
				.contains("routes: default backup -> primary (every enabled endpoint by priority; backup, primary share "
						+ "priority 0, so they are ordered by name: set llm.endpoints.<name>.priority to choose, or "
						+ "llm.routes.default.balance=weighted to share the calls)");
		});
		assertThat(output.getAll()).doesNotContain(SECRET);
	}

	@Test
	void anEndpointOfAnotherProtocolThanOpenAiIsShownWithIt(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("llm.endpoints.primary.protocol=openai-responses", "llm.endpoints.backup.priority=1")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(lines(output, "INFO", "llm-resilience: ")).singleElement(STRING)
					.contains("primary (model big at api.example.com, protocol openai-responses, priority 0)")
					.contains("backup (model llama3.1 at localhost:11434, priority 1)");
			});
	}

	@Test
	void configuredRoutesAreShownInTheirOrderWithoutATieNote(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("llm.endpoints.backup.priority=1", "llm.routes.cheap=backup,primary")
			.run((context) -> assertThat(lines(output, "INFO", "llm-resilience: ")).singleElement(STRING)
				.contains("routes: default primary -> backup (every enabled endpoint by priority); cheap backup -> primary")
				.doesNotContain("share priority"));
	}

	@Test
	void endpointWithoutAKeyIsReportedOnceAtWarnWithTheFix(CapturedOutput output) {
		this.contextRunner.withPropertyValues("llm.endpoints.primary.api-key=").run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(lines(output, "WARN", "has no api-key")).singleElement(STRING)
				.contains("LLM endpoint 'primary' has no api-key (llm.endpoints.primary.api-key is empty or unset)")
				.contains("will answer 401")
				.contains("llm.endpoints.primary.api-key-required=false");
		});
	}

	@Test
	void noKeyWarningForAKeyedEndpointOneMarkedAsNeedingNoneOrOneWithAnAuthHeader(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("llm.endpoints.azure.base-url=https://x.openai.azure.com/openai/v1",
					"llm.endpoints.azure.model=gpt-4o", "llm.endpoints.azure.headers.api-key=azure-header-secret-1")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(lines(output, "INFO", "llm-resilience: ")).hasSize(1);
				assertThat(lines(output, "WARN", "has no api-key")).isEmpty();
			});
	}

	@Test
	void routesAreResolvedOnceSoTheirWarningIsLoggedOnce(CapturedOutput output) {
		this.contextRunner
			.withPropertyValues("llm.endpoints.primary.price.input-per-million=2.5",
					"llm.endpoints.primary.price.output-per-million=10", "llm.routes.default.endpoints=primary,backup",
					"llm.routes.default.order=cheapest-first")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(lines(output, "WARN", "is ordered cheapest-first")).singleElement(STRING)
					.contains("Route 'default' is ordered cheapest-first, but endpoint 'backup' has no price");
				assertThat(lines(output, "INFO", "llm-resilience: ")).hasSize(1);
			});
	}

	private static List<String> lines(CapturedOutput output, String level, String text) {
		return output.getAll().lines().filter((line) -> line.contains(level) && line.contains(text)).toList();
	}

}
