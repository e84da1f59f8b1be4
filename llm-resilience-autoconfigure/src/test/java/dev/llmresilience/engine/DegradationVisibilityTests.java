package dev.llmresilience.engine;

import java.time.Duration;
import java.util.Map;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A route that answers from its fallback shows it without reading any single answer: in the
 * {@code llm.gateway.degraded.*} meters, the {@code llm} health details and
 * {@code /actuator/llmbreakers}, and with a WARN once it has lasted past {@code warn-after}.
 */
@ExtendWith(OutputCaptureExtension.class)
class DegradationVisibilityTests {

	private final FakeUpstream upstreams;

	private final ApplicationContextRunner contextRunner;

	DegradationVisibilityTests() throws Exception {
		this.upstreams = FakeUpstream.priced();
		this.contextRunner = this.upstreams.withMeters()
			.withConfiguration(AutoConfigurations.of(LlmBreakersEndpointAutoConfiguration.class,
					LlmHealthContributorAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=llmbreakers");
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void fallbackAnswersShowInTheMetersTheHealthDetailsAndTheActuator() {
		failPrimaryOnce();
		this.upstreams.backup().enqueue(Answers.completion("small-test", "from backup", 1, 1));
		this.upstreams.primary().enqueue(Answers.completion("gpt-test", "from primary", 1, 1));
		this.contextRunner.run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("llm.gateway.degraded.share").tag("llm.route", "default").gauge().value()).isNaN();
			assertThat(gateway.chat("hi").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.FALLBACK);
			assertThat(meters.get("llm.gateway.degraded.share").tag("llm.route", "default").gauge().value()).isEqualTo(1.0);
			assertThat(meters.get("llm.gateway.degraded.duration").tag("llm.route", "default").gauge().value())
				.isGreaterThanOrEqualTo(0.0);

			Health health = context.getBean(LlmHealthIndicator.class).health(true);
			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails().get("routes")).asInstanceOf(InstanceOfAssertFactories.MAP)
				.extractingByKey("default")
				.isInstanceOfSatisfying(RouteDegradationDescriptor.class, (route) -> {
					assertThat(route.degradedShare()).isEqualTo(1.0);
					assertThat(route.onlyDegradedSince()).isNotNull();
					assertThat(route.onlyDegradedTiers()).isEqualTo(Map.of("FALLBACK", 1L));
				});

			assertThat(gateway.chat("hi").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(meters.get("llm.gateway.degraded.share").tag("llm.route", "default").gauge().value()).isEqualTo(0.5);
			assertThat(meters.get("llm.gateway.degraded.duration").tag("llm.route", "default").gauge().value()).isZero();
			RouteDegradationDescriptor route = context.getBean(LlmBreakersEndpoint.class).breakers().degradation().get("default");
			assertThat(route.answers()).isEqualTo(2);
			assertThat(route.degraded()).isEqualTo(1);
			assertThat(route.onlyDegradedSince()).isNull();
		});
	}

	@Test
	void aRouteStillDegradedAfterWarnAfterIsLoggedOnce(CapturedOutput output) {
		for (int i = 0; i < 3; i++) {
			failPrimaryOnce();
			this.upstreams.backup().enqueue(Answers.completion("small-test", "from backup", 1, 1));
		}
		this.contextRunner.withPropertyValues("llm.degradation.warn-after=1ms").run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			for (int i = 0; i < 3; i++) {
				assertThat(gateway.chat("hi").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.FALLBACK);
			}
		});
		assertThat(output.getAll().lines().filter((line) -> line.contains("WARN") && line.contains("answered only degraded")))
			.singleElement()
			.asString()
			.contains("LLM route 'default' has answered only degraded for")
			.contains("(FALLBACK 2)")
			.contains("its first endpoint 'primary'");
	}

	@Test
	void badWindowOrWarnAfterStopsTheStart() {
		rejected("llm.degradation.window=500ms", "llm.degradation.window");
		rejected("llm.degradation.window=2h", "llm.degradation.window");
		rejected("llm.degradation.warn-after=-1s", "llm.degradation.warn-after");
	}

	private void rejected(String property, String name) {
		this.contextRunner.withPropertyValues(property).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOfSatisfying(LlmConfigurationException.class,
						(exception) -> assertThat(exception.getProperty()).isEqualTo(name));
		});
	}

	private void failPrimaryOnce() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(Answers.errorEchoing(500, FakeUpstream.PRICED_KEY));
		}
	}

}
