package dev.llmresilience.engine;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import io.github.resilience4j.springboot.bulkhead.autoconfigure.BulkheadAutoConfiguration;
import io.github.resilience4j.springboot.circuitbreaker.autoconfigure.CircuitBreakerAutoConfiguration;
import io.github.resilience4j.springboot.retry.autoconfigure.RetryAutoConfiguration;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With Resilience4j's own Spring Boot integration, our breakers live in its registries (so they
 * show in /actuator/circuitbreakers and its metrics, and its instances block tunes them); without
 * it, in registries of our own.
 */
class Resilience4jRegistriesTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
		.withPropertyValues("llm.endpoints.primary.base-url=http://127.0.0.1:9/v1",
				"llm.endpoints.primary.model=gpt-test", "llm.endpoints.backup.base-url=http://127.0.0.1:9/v1",
				"llm.endpoints.backup.model=small-test", "llm.endpoints.backup.priority=1");

	@Test
	void withoutResilience4jBootTheBreakersLiveInRegistriesOfOurOwn() {
		this.contextRunner.run((context) -> {
			assertThat(context).doesNotHaveBean(CircuitBreakerRegistry.class);
			ResilienceRegistries registries = context.getBean(ResilienceRegistries.class);
			assertThat(registries.shared()).isFalse();
			LlmEndpoint primary = context.getBean(EndpointRegistry.class).endpoint("primary");
			assertThat(registries.circuitBreakers().find("primary")).containsSame(primary.circuitBreaker());
			assertThat(primary.circuitBreaker().getCircuitBreakerConfig().getSlidingWindowSize()).isEqualTo(20);
		});
	}

	@Test
	void withResilience4jBootTheBreakersLiveInItsRegistriesAndItsInstancesBlockTunesThem() {
		this.contextRunner
			.withConfiguration(AutoConfigurations.of(CircuitBreakerAutoConfiguration.class,
					RetryAutoConfiguration.class, BulkheadAutoConfiguration.class))
			.withPropertyValues("resilience4j.circuitbreaker.instances.primary.sliding-window-size=7",
					"resilience4j.circuitbreaker.instances.primary.minimum-number-of-calls=7",
					"resilience4j.circuitbreaker.instances.primary.failure-rate-threshold=30")
			.run((context) -> {
				ResilienceRegistries registries = context.getBean(ResilienceRegistries.class);
				assertThat(registries.shared()).isTrue();
				CircuitBreakerRegistry circuitBreakers = context.getBean(CircuitBreakerRegistry.class);
				EndpointRegistry endpoints = context.getBean(EndpointRegistry.class);
				LlmEndpoint primary = endpoints.endpoint("primary");
				LlmEndpoint backup = endpoints.endpoint("backup");
				assertThat(circuitBreakers.find("primary")).containsSame(primary.circuitBreaker());
				assertThat(circuitBreakers.find("backup")).containsSame(backup.circuitBreaker());
				assertThat(context.getBean(RetryRegistry.class).find("primary")).containsSame(primary.retry());
				assertThat(context.getBean(BulkheadRegistry.class).find("primary")).containsSame(primary.bulkhead());

				CircuitBreakerConfig tuned = primary.circuitBreaker().getCircuitBreakerConfig();
				assertThat(tuned.getSlidingWindowSize()).isEqualTo(7);
				assertThat(tuned.getFailureRateThreshold()).isEqualTo(30f);
				assertThat(backup.circuitBreaker().getCircuitBreakerConfig().getSlidingWindowSize()).isEqualTo(20);

				// the failure rules are not a tuning knob: a content-filter block is still ignored
				LlmUpstreamException filtered = new LlmUpstreamException("primary", Outcome.CONTENT_FILTERED, 200, null,
						"filtered", null);
				LlmUpstreamException serverError = new LlmUpstreamException("primary", Outcome.SERVER_ERROR, 500, null,
						"boom", null);
				assertThat(tuned.getIgnoreExceptionPredicate().test(filtered)).isTrue();
				assertThat(tuned.getRecordExceptionPredicate().test(serverError)).isTrue();
			});
	}

}
