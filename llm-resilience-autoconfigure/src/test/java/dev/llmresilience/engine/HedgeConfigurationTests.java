package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code llm.gateway.hedge}: off by default, a route's own settings over the defaults,
 * and a bad value fails start-up naming its key.
 */
class HedgeConfigurationTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
		.withPropertyValues("llm.endpoints.main.base-url=http://localhost:9/v1", "llm.endpoints.main.model=m",
				"llm.endpoints.second.base-url=http://localhost:9/v1", "llm.endpoints.second.model=m2",
				"llm.endpoints.second.priority=1");

	@Test
	void noRouteHedgesByDefault() {
		this.contextRunner.run((context) -> assertThat(context.getBean(Hedging.class).report()).isEmpty());
	}

	@Test
	void enabledHedgingUsesTheDocumentedDefaults() {
		this.contextRunner.withPropertyValues("llm.gateway.hedge.enabled=true").run((context) -> {
			HedgeSettings settings = context.getBean(Hedging.class).report().get("default").settings();
			assertThat(settings).isEqualTo(HedgeSettings.DEFAULTS.on());
			assertThat(settings.adaptive()).isTrue();
			assertThat(settings.percentile()).isEqualTo(95);
			assertThat(settings.delay()).isEqualTo(Duration.ofSeconds(2));
			assertThat(settings.minDelay()).isEqualTo(Duration.ofMillis(100));
			assertThat(settings.maxRatio()).isEqualTo(0.1);
			assertThat(settings.window()).isEqualTo(Duration.ofMinutes(1));
		});
	}

	@Test
	void routesOwnSettingsOverrideTheDefaultsKeyByKey() {
		this.contextRunner
			.withPropertyValues("llm.routes.fast=main,second", "llm.gateway.hedge.max-ratio=0.2",
					"llm.gateway.hedge.routes.fast.enabled=true", "llm.gateway.hedge.routes.fast.adaptive=false",
					"llm.gateway.hedge.routes.fast.delay=300ms")
			.run((context) -> {
				assertThat(context.getBean(Hedging.class).report()).containsOnlyKeys("fast");
				HedgeSettings fast = context.getBean(Hedging.class).report().get("fast").settings();
				assertThat(fast.adaptive()).isFalse();
				assertThat(fast.delay()).isEqualTo(Duration.ofMillis(300));
				assertThat(fast.maxRatio()).isEqualTo(0.2);
			});
	}

	@ParameterizedTest
	@CsvSource(delimiter = '|', value = { "llm.gateway.hedge.percentile=100|llm.gateway.hedge.percentile|outside (0, 100)",
			"llm.gateway.hedge.percentile=0|llm.gateway.hedge.percentile|outside (0, 100)",
			"llm.gateway.hedge.delay=0s|llm.gateway.hedge.delay|must be positive",
			"llm.gateway.hedge.min-delay=-1s|llm.gateway.hedge.min-delay|must not be negative",
			"llm.gateway.hedge.max-ratio=1.5|llm.gateway.hedge.max-ratio|outside [0, 1]",
			"llm.gateway.hedge.window=0s|llm.gateway.hedge.window|must be positive",
			"llm.gateway.hedge.routes.default.max-ratio=-0.1|llm.gateway.hedge.routes.default.max-ratio|outside [0, 1]",
			"llm.gateway.hedge.routes.nowhere.enabled=true|llm.gateway.hedge.routes.nowhere|which is not configured" })
	void badValueFailsStartUpNamingItsKey(String property, String key, String problem) {
		this.contextRunner.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			assertThat(failure).rootCause().isInstanceOf(LlmConfigurationException.class);
			Throwable root = failure;
			while (root.getCause() != null) {
				root = root.getCause();
			}
			LlmConfigurationException exception = (LlmConfigurationException) root;
			assertThat(exception.getProperty()).isEqualTo(key);
			assertThat(exception.getMessage()).startsWith(key + ": ").contains(problem);
		});
	}

}
