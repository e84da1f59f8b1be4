package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.BalanceSource;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.context.ApplicationContext;

import static dev.llmresilience.engine.BalancedUpstreams.balancing;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Balancing never chooses an endpoint whose breaker is open (or whose bulkhead is full): it stays
 * in the route, after the chosen one, and is passed without a call.
 */
class OpenBreakerBalancingTests {

	private final BalancedUpstreams upstreams = new BalancedUpstreams("a", "b", "c");

	@AfterEach
	void close() {
		this.upstreams.close();
	}

	@ParameterizedTest
	@ValueSource(strings = { "weighted", "least-latency" })
	void anEndpointWhoseBreakerOpenedIsNeverChosenFirst(String balance) {
		this.upstreams.get("a").failWith(500);
		// a weighs the most and, answering 500 at once, looks the fastest; the balancer's clock moves a
		// virtual second each time it is read, so that an estimate a failure raised (a 500 slower than b's
		// answers on a busy machine) decays within a few calls instead of a real ten seconds
		AtomicLong clock = new AtomicLong();
		this.upstreams.runner("llm.routes.default.endpoints=a,b,c", "llm.routes.default.balance=" + balance,
				"llm.endpoints.a.weight=8", "llm.endpoints.a.circuit-breaker.sliding-window-size=4",
				"llm.endpoints.a.circuit-breaker.minimum-number-of-calls=4")
			.withBean(BalanceSource.class,
					() -> BalanceSource.seeded(11, () -> clock.addAndGet(Duration.ofSeconds(1).toNanos())))
			.run((context) -> {
				CircuitBreaker breaker = FakeUpstream.endpoint(context, "a").circuitBreaker();
				for (int i = 0; i < 200 && breaker.getState() != CircuitBreaker.State.OPEN; i++) {
					assertThat(chat(context).endpoint()).isIn("b", "c");
				}
				assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.OPEN);
				long seen = this.upstreams.get("a").requests();
				long chosen = balancing(context, "default").endpoints().get("a").chosen();
				for (int i = 0; i < 60; i++) {
					ChatResponse response = chat(context);
					assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
					assertThat(response.attempts()).extracting(Attempt::endpoint).containsExactly(response.endpoint());
					assertThat(response.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
				}
				assertThat(this.upstreams.get("a").requests()).isEqualTo(seen);
				assertThat(balancing(context, "default").endpoints().get("a").chosen()).isEqualTo(chosen);
			});
	}

	@ParameterizedTest
	@ValueSource(strings = { "weighted", "least-latency" })
	void withEveryBreakerOpenTheCallIsBusyWithoutACall(String balance) {
		this.upstreams.runner("llm.routes.default.endpoints=a,b", "llm.routes.default.balance=" + balance)
			.run((context) -> {
				FakeUpstream.endpoint(context, "a").circuitBreaker().transitionToForcedOpenState();
				FakeUpstream.endpoint(context, "b").circuitBreaker().transitionToForcedOpenState();
				ChatResponse response = chat(context);
				assertThat(response.tier()).isEqualTo(Tier.BUSY);
				assertThat(response.attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.BREAKER_OPEN, Outcome.BREAKER_OPEN);
				assertThat(this.upstreams.get("a").requests() + this.upstreams.get("b").requests()).isZero();
			});
	}

	@ParameterizedTest
	@ValueSource(strings = { "weighted", "least-latency" })
	void anEndpointWithAFullBulkheadIsNotChosen(String balance) {
		FakeUpstream.Gate gate = new FakeUpstream.Gate(Answers.completion("held"));
		this.upstreams.get("a").server.setDispatcher(gate);
		this.upstreams.runner("llm.routes.default.endpoints=a,b", "llm.routes.default.balance=" + balance,
				"llm.endpoints.a.bulkhead.max-concurrent-calls=1", "llm.endpoints.a.weight=100")
			.withBean(BalanceSource.class, () -> BalanceSource.seeded(2, System::nanoTime))
			.run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				// calls until one holds a's only permit (least-latency may send the first ones to b, which answers)
				MockWebServer a = this.upstreams.get("a").server;
				for (int i = 0; i < 20 && a.getRequestCount() == 0; i++) {
					int sent = i + 1;
					gateway.chat("held " + i).subscribe();
					await().atMost(Duration.ofSeconds(10))
						.until(() -> a.getRequestCount() + this.upstreams.get("b").requests() >= sent);
				}
				assertThat(a.getRequestCount()).isEqualTo(1);
				for (int i = 0; i < 10; i++) {
					ChatResponse response = chat(context);
					assertThat(response.endpoint()).isEqualTo("b");
					assertThat(response.attempts()).extracting(Attempt::endpoint).containsExactly("b");
				}
				gate.open();
			});
	}

	private static ChatResponse chat(ApplicationContext context) {
		return context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(20));
	}

}
