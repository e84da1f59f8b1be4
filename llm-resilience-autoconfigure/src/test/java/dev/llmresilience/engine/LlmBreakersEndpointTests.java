package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.LlmBreakersEndpoint.BreakersDescriptor;
import dev.llmresilience.engine.LlmBreakersEndpoint.EndpointDescriptor;
import dev.llmresilience.gateway.LlmGateway;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link LlmBreakersEndpoint} and its auto-configuration: when it exists, and what it
 * reports as real calls go through the endpoints.
 */
class LlmBreakersEndpointTests {

	private static final String EXPOSED = "management.endpoints.web.exposure.include=llmbreakers";

	private final MockWebServer server = new MockWebServer();

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class, LlmBreakersEndpointAutoConfiguration.class));

	@BeforeEach
	void startServer() throws Exception {
		this.server.start();
	}

	@AfterEach
	void stopServer() {
		this.server.close();
	}

	@Test
	void endpointIsCreatedWhenExposed() {
		this.contextRunner.withPropertyValues(endpoint())
			.run((context) -> assertThat(context).hasSingleBean(LlmBreakersEndpoint.class));
	}

	@Test
	void endpointIsNotCreatedWhenNotExposed() {
		this.contextRunner.withPropertyValues("llm.endpoints.main.base-url=" + this.server.url("/v1"),
				"llm.endpoints.main.model=big")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(LlmBreakersEndpoint.class));
	}

	@Test
	void endpointIsNotCreatedWhenItsAccessIsNone() {
		this.contextRunner.withPropertyValues(endpoint())
			.withPropertyValues("management.endpoint.llmbreakers.access=NONE")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(LlmBreakersEndpoint.class));
	}

	@Test
	void endpointIsNotCreatedWhenTheStarterIsDisabled() {
		this.contextRunner.withPropertyValues(EXPOSED, "llm.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(LlmBreakersEndpoint.class));
	}

	@Test
	void reportListsEveryEndpointInPriorityOrderAndEveryRoute() {
		this.contextRunner.withPropertyValues(endpoint())
			.withPropertyValues("llm.endpoints.backup.base-url=http://localhost:9/v1", "llm.endpoints.backup.model=small",
					"llm.endpoints.backup.priority=-1", "llm.endpoints.off.base-url=http://localhost:9/v1",
					"llm.endpoints.off.model=off", "llm.endpoints.off.priority=5", "llm.endpoints.off.enabled=false",
					"llm.routes.cheap=backup")
			.run((context) -> {
				BreakersDescriptor report = context.getBean(LlmBreakersEndpoint.class).breakers();
				assertThat(report.endpoints().keySet()).containsExactly("backup", "main", "off");
				assertThat(report.endpoints().get("off").settings().enabled()).isFalse();
				assertThat(report.routes()).containsOnly(Map.entry("default", List.of("backup", "main")),
						Map.entry("cheap", List.of("backup")));
			});
	}

	@Test
	void unknownEndpointHasNoDescriptor() {
		this.contextRunner.withPropertyValues(endpoint())
			.run((context) -> assertThat(context.getBean(LlmBreakersEndpoint.class).breaker("nope")).isNull());
	}

	@Test
	void failedCallIsCountedButDoesNotOpenTheBreakerBeforeTheMinimumNumberOfCalls() {
		this.server.enqueue(new MockResponse.Builder().code(500).build());
		this.contextRunner.withPropertyValues(endpoint()).withPropertyValues("llm.endpoints.main.retry.max-attempts=1")
			.run((context) -> {
				assertThat(context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(10)).tier())
					.isEqualTo(Tier.BUSY);
				EndpointDescriptor main = context.getBean(LlmBreakersEndpoint.class).breaker("main");
				assertThat(main.breaker().state()).isEqualTo("CLOSED");
				assertThat(main.breaker().bufferedCalls()).isEqualTo(1);
				assertThat(main.breaker().failedCalls()).isEqualTo(1);
				assertThat(main.breaker().failureRate()).isEqualTo(-1.0f);
				assertThat(main.breaker().notPermittedCalls()).isZero();
				assertThat(main.past().lastTransition()).isNull();
			});
	}

	@Test
	void breakerOpenedByFailuresShowsItsTransitionAndTheCallsItRefused() {
		this.server.enqueue(new MockResponse.Builder().code(503).build());
		this.server.enqueue(new MockResponse.Builder().code(503).build());
		this.contextRunner.withPropertyValues(endpoint())
			.withPropertyValues("llm.endpoints.main.retry.max-attempts=1",
					"llm.endpoints.main.circuit-breaker.sliding-window-size=2",
					"llm.endpoints.main.circuit-breaker.minimum-number-of-calls=2")
			.run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				for (int i = 0; i < 3; i++) {
					assertThat(gateway.chat("hello").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.BUSY);
				}
				EndpointDescriptor main = context.getBean(LlmBreakersEndpoint.class).breaker("main");
				assertThat(main.breaker().state()).isEqualTo("OPEN");
				assertThat(main.breaker().failureRate()).isEqualTo(100.0f);
				assertThat(main.breaker().failedCalls()).isEqualTo(2);
				assertThat(main.breaker().notPermittedCalls()).isEqualTo(1);
				assertThat(main.past().lastTransition().from()).isEqualTo("CLOSED");
				assertThat(main.past().lastTransition().to()).isEqualTo("OPEN");
				assertThat(this.server.getRequestCount()).isEqualTo(2);
			});
	}

	@Test
	void callInFlightHoldsABulkheadPermitUntilItIsCancelled() {
		this.server.enqueue(new MockResponse.Builder().code(200).headersDelay(30, TimeUnit.SECONDS).build());
		this.contextRunner.withPropertyValues(endpoint())
			.withPropertyValues("llm.endpoints.main.bulkhead.max-concurrent-calls=3")
			.run((context) -> {
				LlmBreakersEndpoint breakers = context.getBean(LlmBreakersEndpoint.class);
				assertThat(breakers.breaker("main").bulkhead().availableConcurrentCalls()).isEqualTo(3);
				Disposable call = context.getBean(LlmGateway.class).chat("hello").subscribe();
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(breakers.breaker("main").bulkhead().availableConcurrentCalls()).isEqualTo(2));
				assertThat(breakers.breaker("main").bulkhead().maxConcurrentCalls()).isEqualTo(3);
				call.dispose();
				await().atMost(Duration.ofSeconds(5))
					.untilAsserted(() -> assertThat(breakers.breaker("main").bulkhead().availableConcurrentCalls()).isEqualTo(3));
			});
	}

	private String[] endpoint() {
		return new String[] { EXPOSED, "llm.endpoints.main.base-url=" + this.server.url("/v1"), "llm.endpoints.main.model=big",
				"llm.endpoints.main.api-key=sk-breakers-key" };
	}

}
