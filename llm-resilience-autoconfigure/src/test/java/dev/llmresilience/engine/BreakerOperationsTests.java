package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.LlmBreakersEndpoint.EndpointDescriptor;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

@ExtendWith(OutputCaptureExtension.class)
class BreakerOperationsTests {

	private final FakeUpstream upstreams;

	private final ApplicationContextRunner contextRunner;

	BreakerOperationsTests() throws Exception {
		this.upstreams = FakeUpstream.priced();
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class,
					LlmBreakersEndpointAutoConfiguration.class, LlmHealthContributorAutoConfiguration.class))
			.withPropertyValues(this.upstreams.properties("management.endpoints.web.exposure.include=llmbreakers"));
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void writeOperationMovesTheBreakerToEachState() {
		this.contextRunner.run((context) -> {
			LlmBreakersEndpoint endpoint = context.getBean(LlmBreakersEndpoint.class);
			assertThat(endpoint.transition("primary", "FORCED_OPEN").breaker().state()).isEqualTo("FORCED_OPEN");
			assertThat(endpoint.transition("primary", "CLOSED").breaker().state()).isEqualTo("CLOSED");
			assertThat(endpoint.transition("primary", "disabled").breaker().state()).isEqualTo("DISABLED");
			EndpointDescriptor reset = endpoint.transition("primary", "RESET");
			assertThat(reset.breaker().state()).isEqualTo("CLOSED");
			assertThat(reset.past().transitions()).extracting((transition) -> transition.from() + "->" + transition.to())
				.containsExactly("CLOSED->FORCED_OPEN", "FORCED_OPEN->CLOSED", "CLOSED->DISABLED", "DISABLED->CLOSED");
		});
	}

	@Test
	void forcedOpenSendsTrafficToTheNextEndpointWithoutCallingThePrimary() {
		this.upstreams.backup().enqueue(Answers.completion("small-test", "from backup", 1, 1));
		this.contextRunner.run((context) -> {
			context.getBean(LlmBreakersEndpoint.class).transition("primary", "FORCED_OPEN");
			assertThat(context.getBean(LlmGateway.class).chat("hi").block(Duration.ofSeconds(10)).tier())
				.isEqualTo(Tier.FALLBACK);
			assertThat(this.upstreams.primary().getRequestCount()).isZero();
		});
	}

	@Test
	void unknownNameIsA404AndUnknownStateA400() {
		this.contextRunner.run((context) -> {
			LlmBreakersEndpointWebExtension web = context.getBean(LlmBreakersEndpointWebExtension.class);
			assertThat(web.transition("nope", "RESET").getStatus()).isEqualTo(WebEndpointResponse.STATUS_NOT_FOUND);
			assertThat(web.transition("primary", "RESET").getStatus()).isEqualTo(WebEndpointResponse.STATUS_OK);
			assertThatExceptionOfType(InvalidEndpointRequestException.class)
				.isThrownBy(() -> web.transition("primary", "HALF_OPEN"))
				.withMessageContaining("FORCED_OPEN, CLOSED, DISABLED, RESET");
		});
	}

	@Test
	void healthStaysUpWhileARouteIsUnavailableAndListsIt() {
		this.contextRunner.run((context) -> {
			LlmBreakersEndpoint endpoint = context.getBean(LlmBreakersEndpoint.class);
			LlmHealthIndicator health = context.getBean(LlmHealthIndicator.class);
			Health healthy = health.health(true);
			assertThat(healthy.getStatus()).isEqualTo(Status.UP);
			assertThat(healthy.getDetails()).containsEntry("unavailableRoutes", List.of());
			endpoint.transition("primary", "FORCED_OPEN");
			endpoint.transition("backup", "FORCED_OPEN");
			Health outage = health.health(true);
			assertThat(outage.getStatus()).isEqualTo(Status.UP);
			assertThat(outage.getDetails()).containsEntry("unavailableRoutes", List.of("default"));
			assertThat(outage.getDetails().get("endpoints")).asInstanceOf(InstanceOfAssertFactories.MAP)
				.containsEntry("primary", Map.of("state", "FORCED_OPEN", "failureRate", -1.0f));
		});
	}

	@Test
	void healthReportsDownWhenAskedToAndEveryEndpointOfARouteIsOpen() {
		this.contextRunner.withPropertyValues("llm.health.down-when-route-unavailable=true").run((context) -> {
			LlmBreakersEndpoint endpoint = context.getBean(LlmBreakersEndpoint.class);
			LlmHealthIndicator health = context.getBean(LlmHealthIndicator.class);
			endpoint.transition("primary", "FORCED_OPEN");
			assertThat(health.health(true).getStatus()).isEqualTo(Status.UP);
			endpoint.transition("backup", "FORCED_OPEN");
			assertThat(health.health(true).getStatus()).isEqualTo(Status.DOWN);
		});
	}

	@Test
	void healthContributorCanBeSwitchedOff() {
		this.contextRunner.withPropertyValues("management.health.llm.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(LlmHealthIndicator.class));
	}

	@Test
	void eachTransitionIsLoggedOnceAtWarnWithRateAndWindowAndNoKey(CapturedOutput output) {
		for (int i = 0; i < 2; i++) {
			this.upstreams.primary().enqueue(Answers.errorEchoing(500, FakeUpstream.PRICED_KEY));
		}
		this.upstreams.backup().enqueue(Answers.completion("small-test", "ok", 1, 1));
		// at DEBUG the gateway logs each failure's message, which repeats the key (Answers.errorEchoing)
		LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
		logging.setLogLevel("dev.llmresilience", LogLevel.DEBUG);
		try {
			runUntilTheBreakerOpens();
		}
		finally {
			logging.setLogLevel("dev.llmresilience", null);
		}
		assertThat(output.getOut().lines().filter((line) -> line.contains("circuit breaker CLOSED -> OPEN")))
			.singleElement()
			.satisfies((line) -> assertThat(line).contains("WARN")
				.contains("'primary'")
				.contains("failure rate 100.0 %")
				.contains("over the 2 calls in its window of 2")
				.doesNotContain(FakeUpstream.PRICED_KEY));
		assertThat(output.getAll()).contains("failed with SERVER_ERROR", "upstream says 500 to Authorization: Bearer [redacted] (key [redacted])")
			.doesNotContain(FakeUpstream.PRICED_KEY)
			.doesNotContain("Exception:");
	}

	private void runUntilTheBreakerOpens() {
		this.contextRunner
			.withPropertyValues("llm.endpoints.primary.circuit-breaker.sliding-window-size=2",
					"llm.endpoints.primary.circuit-breaker.minimum-number-of-calls=2",
					"llm.endpoints.primary.retry.max-attempts=2")
			.run((context) -> {
				assertThat(context.getBean(LlmGateway.class).chat("hi").block(Duration.ofSeconds(10)).tier())
					.isEqualTo(Tier.FALLBACK);
				EndpointRegistry endpoints = context.getBean(EndpointRegistry.class);
				assertThat(endpoints.endpoint("primary").circuitBreaker().getState().name()).isEqualTo("OPEN");
			});
	}

}
