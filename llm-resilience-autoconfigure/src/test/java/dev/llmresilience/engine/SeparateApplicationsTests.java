package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two applications on one Redis, each with its default key prefix ({@code llm:<its name>:}), share
 * nothing: a breaker forced open in one stays closed in the other, and a deferred request one of
 * them leaves behind when it stops is never run by the other (with the other's provider key).
 * Given the same prefix on purpose, they share.
 */
class SeparateApplicationsTests {

	@RegisterExtension
	final RedisFleet redis = new RedisFleet();

	private SwitchableProvider providerOfA;

	private SwitchableProvider providerOfB;

	@BeforeEach
	void start() throws Exception {
		this.providerOfA = new SwitchableProvider();
		this.providerOfA.heal();
		this.providerOfB = new SwitchableProvider();
	}

	@AfterEach
	void stop() {
		this.providerOfA.close();
		this.providerOfB.close();
	}

	private ApplicationContextRunner application(String name, SwitchableProvider provider, String... more) {
		return this.redis
			.replica(name + "-1", "spring.application.name=" + name, "llm.endpoints.primary.base-url=" + provider.baseUrl(),
					"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1",
					"llm.gateway.deferral.delay=1s", "llm.gateway.deferral.max-attempts=10")
			.withPropertyValues(more);
	}

	@Test
	void twoApplicationsWithTheirDefaultPrefixesShareNothing() {
		application("orders", this.providerOfA).run((a) -> {
			application("billing", this.providerOfB).run((b) -> {
				b.getBean(LlmBreakersEndpoint.class).transition("primary", "FORCED_OPEN");
				ChatResponse deferred = b.getBean(LlmGateway.class)
					.chat(ChatRequest.builder().user("billing's prompt").deferrable(true).build())
					.block(Duration.ofSeconds(30));
				assertThat(deferred.tier()).isEqualTo(Tier.DEFERRED);
				await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
					.until(() -> state(a) == CircuitBreaker.State.CLOSED);
				assertThat(this.redis.commands().keys("*"))
					.allMatch((key) -> key.startsWith("llm:orders:") || key.startsWith("llm:billing:"))
					.anyMatch((key) -> key.startsWith("llm:billing:deferred:"))
					.noneMatch((key) -> key.startsWith("llm:orders:deferred:"));
			});
			// billing stopped with its request pending: past a replica-timeout (3 s) orders would take it over, if it saw it
			await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(10))
				.until(() -> this.providerOfA.requests() == 0 && a.getBean(FleetEvents.class).completed.isEmpty());
			assertThat(state(a)).isEqualTo(CircuitBreaker.State.CLOSED);
			assertThat(a.getBean(LlmGateway.class).chat(ChatRequest.ofUser("orders' own")).block(Duration.ofSeconds(30))
				.tier()).isEqualTo(Tier.PRIMARY);
		});
	}

	@Test
	void twoApplicationsGivenTheSamePrefixShare() {
		Replicas.run(List.of(application("orders", this.providerOfA, "llm.shared-state.key-prefix=llm:shop:"),
				application("billing", this.providerOfA, "llm.shared-state.key-prefix=llm:shop:")), (apps) -> {
					apps.get(1).getBean(LlmBreakersEndpoint.class).transition("primary", "FORCED_OPEN");
					await().atMost(Duration.ofSeconds(30)).until(() -> state(apps.get(0)) == CircuitBreaker.State.FORCED_OPEN);
				});
	}

	private static CircuitBreaker.State state(ApplicationContext application) {
		return endpoint(application, "primary").circuitBreaker().getState();
	}

}
