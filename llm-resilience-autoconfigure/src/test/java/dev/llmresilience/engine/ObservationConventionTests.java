package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.AttemptObservationContext;
import dev.llmresilience.spi.AttemptObservationConvention;
import dev.llmresilience.spi.CallObservationContext;
import dev.llmresilience.spi.CallObservationConvention;
import dev.llmresilience.spi.DefaultAttemptObservationConvention;
import dev.llmresilience.spi.DefaultCallObservationConvention;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;

/**
 * The names and key values of the call and attempt observations come from their conventions: the
 * starter's defaults, or an application's {@link CallObservationConvention} and
 * {@link AttemptObservationConvention} beans, which Spring Boot hands to the observation registry.
 */
class ObservationConventionTests {

	private static final String ANSWER = "{\"model\":\"m1\",\"choices\":[{\"message\":{\"role\":\"assistant\","
			+ "\"content\":\"hi\"},\"finish_reason\":\"stop\"}]}";

	private final MockWebServer provider = new MockWebServer();

	private ApplicationContextRunner contextRunner;

	@BeforeEach
	void start() throws Exception {
		this.provider.start();
		this.provider.enqueue(new MockResponse.Builder().code(200)
			.setHeader("Content-Type", "application/json")
			.body(ANSWER)
			.build());
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class, LlmAutoConfiguration.class))
			.withBean(ObservationRegistry.class, TestObservationRegistry::create)
			.withPropertyValues("llm.endpoints.primary.base-url=" + this.provider.url("/v1"),
					"llm.endpoints.primary.model=m1", "llm.defaults.upstream-streaming=false");
	}

	@AfterEach
	void stop() {
		this.provider.close();
	}

	@Test
	void withoutConventionBeansTheStartersNamesAndKeysApply() {
		this.contextRunner.run((context) -> {
			TestObservationRegistry registry = answer(context, DefaultCallObservationConvention.NAME);
			assertThat(registry).hasObservationWithNameEqualTo(DefaultCallObservationConvention.NAME)
				.that()
				.hasContextualNameEqualTo("llm default")
				.hasLowCardinalityKeyValue(DefaultCallObservationConvention.ROUTE, "default")
				.hasLowCardinalityKeyValue(DefaultCallObservationConvention.TIER, "PRIMARY")
				.hasLowCardinalityKeyValue(DefaultCallObservationConvention.ENDPOINT, "primary")
				.hasHighCardinalityKeyValue(DefaultCallObservationConvention.ATTEMPTS, "1");
			assertThat(registry).hasObservationWithNameEqualTo(DefaultAttemptObservationConvention.NAME)
				.that()
				.hasContextualNameEqualTo("chat m1")
				.hasLowCardinalityKeyValue(DefaultAttemptObservationConvention.ENDPOINT, "primary")
				.hasLowCardinalityKeyValue(DefaultAttemptObservationConvention.OUTCOME, "SUCCESS")
				.hasLowCardinalityKeyValue(DefaultAttemptObservationConvention.ERROR_TYPE, "none");
		});
	}

	@Test
	void conventionBeansOfTheApplicationNameAndTagTheObservations() {
		this.contextRunner.withUserConfiguration(ConventionConfiguration.class).run((context) -> {
			TestObservationRegistry registry = answer(context, "shop.llm.call");
			assertThat(registry).hasNumberOfObservationsWithNameEqualTo(DefaultCallObservationConvention.NAME, 0)
				.hasNumberOfObservationsWithNameEqualTo(DefaultAttemptObservationConvention.NAME, 0)
				.hasObservationWithNameEqualTo("shop.llm.call")
				.that()
				.hasLowCardinalityKeyValue("shop.route", "default")
				.hasLowCardinalityKeyValue("shop.tier", "PRIMARY")
				.doesNotHaveLowCardinalityKeyValueWithKey(DefaultCallObservationConvention.ROUTE);
			assertThat(registry).hasObservationWithNameEqualTo("shop.llm.attempt")
				.that()
				.hasLowCardinalityKeyValue("shop.endpoint", "primary")
				.hasLowCardinalityKeyValue("shop.outcome", "SUCCESS")
				.hasParentObservationContextMatching((parent) -> parent.getName().equals("shop.llm.call"));
		});
	}

	// The call's observation stops once the answer is known, before it reaches the caller.
	private static TestObservationRegistry answer(AssertableApplicationContext context, String call) {
		context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(10));
		TestObservationRegistry registry = (TestObservationRegistry) context.getBean(ObservationRegistry.class);
		assertThat(registry).hasObservationWithNameEqualTo(call).that().hasBeenStopped();
		return registry;
	}

	@Configuration(proxyBeanMethods = false)
	static class ConventionConfiguration {

		@Bean
		CallObservationConvention shopCallConvention() {
			return new CallObservationConvention() {

				@Override
				public String getName() {
					return "shop.llm.call";
				}

				@Override
				public KeyValues getLowCardinalityKeyValues(CallObservationContext context) {
					String tier = (context.response() != null) ? context.response().tier().name() : "NONE";
					return KeyValues.of("shop.route", context.route(), "shop.tier", tier);
				}

			};
		}

		@Bean
		AttemptObservationConvention shopAttemptConvention() {
			return new AttemptObservationConvention() {

				@Override
				public String getName() {
					return "shop.llm.attempt";
				}

				@Override
				public KeyValues getLowCardinalityKeyValues(AttemptObservationContext context) {
					return KeyValues.of("shop.endpoint", context.endpoint().name(), "shop.outcome",
							String.valueOf(context.outcome()));
				}

			};
		}

	}

}
