package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.BalanceSource;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.engine.BalancedUpstreams.balancing;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code balance: least-latency} over real local servers: the latencies are real (a server that
 * answers 400 ms late against one that answers at once), the time the estimates decay by is
 * virtual, one second per call, as if the calls came once a second.
 */
class LeastLatencyBalancingTests {

	private static final Duration SLOW = Duration.ofMillis(400);

	private final BalancedUpstreams upstreams = new BalancedUpstreams("a", "b");

	private final AtomicLong clock = new AtomicLong();

	@AfterEach
	void close() {
		this.upstreams.close();
	}

	@Test
	void trafficMovesAwayFromAServerThatSlowsDownAndBackWhenItRecovers() {
		runner().withBean(BalanceSource.class, () -> BalanceSource.seeded(42, this.clock::get)).run((context) -> {
			warmUp(context);
			BalancedUpstreams.Upstream a = this.upstreams.get("a");
			long warm = a.requests();
			int before = callsTo(context, "a", 20);
			assertThat(before).as("a's calls of 20 while both are fast").isGreaterThanOrEqualTo(2);

			a.answerAfter(SLOW);
			int slow = callsTo(context, "a", 40);
			assertThat(slow).as("a's calls of 40 while it answers 400 ms late").isLessThanOrEqualTo(4);
			assertThat(a.requests()).isEqualTo(warm + before + slow);

			a.answerAfter(Duration.ZERO);
			int recovered = callsTo(context, "a", 80);
				assertThat(recovered).as("a's calls of 80 once it is fast again").isGreaterThanOrEqualTo(8);

			assertThat(balancing(context, "default").balance()).isEqualTo("least-latency");
			assertThat(balancing(context, "default").endpoints().get("a").latencyMillis()).isNotNull();
			assertThat(context.getBean(MeterRegistry.class)
				.get("llm.endpoint.latency.estimate")
				.tags("llm.endpoint", "b")
				.gauge()
				.value()).isGreaterThan(0);
		});
	}

	@Test
	void aServerThatHangsIsTriedOnceAndThenLeftAlone() {
		runner("llm.endpoints.a.first-token-timeout=2s")
			.withBean(BalanceSource.class, () -> BalanceSource.seeded(5, this.clock::get))
			.run((context) -> {
				warmUp(context);
				long warm = this.upstreams.get("a").requests();
				this.upstreams.get("a").answerAfter(Duration.ofSeconds(5));
				for (int i = 0; i < 30; i++) {
					assertThat(call(context).endpoint()).isEqualTo("b");
				}
				// its first-token timeout, a failure, is its latency from then on: left alone until it decays
				assertThat(this.upstreams.get("a").requests() - warm).isBetween(1L, 2L);
			});
	}

	private ApplicationContextRunner runner(String... more) {
		List<String> properties = new ArrayList<>(List.of("llm.routes.default.endpoints=a,b",
				"llm.routes.default.balance=least-latency", "llm.routes.only-a=a", "llm.routes.only-b=b"));
		properties.addAll(List.of(more));
		return this.upstreams.runner(properties.toArray(String[]::new));
	}

	// A gateway that has been running: each endpoint's first (cold) call is long past, and its estimate
	// is its warm latency: two answers each, a minute apart (a cold call may time out under load).
	private void warmUp(ApplicationContext context) {
		for (String route : List.of("only-a", "only-b")) {
			int answered = 0;
			for (int i = 0; i < 10 && answered < 2; i++) {
				this.clock.addAndGet(Duration.ofMinutes(1).toNanos());
				ChatResponse response = context.getBean(LlmGateway.class)
					.chat(ChatRequest.builder().user("warm up").route(route).build())
					.block(Duration.ofSeconds(20));
				answered += (response.tier() == Tier.PRIMARY) ? 1 : 0;
			}
			assertThat(answered).as(route).isEqualTo(2);
		}
		this.clock.addAndGet(Duration.ofMinutes(1).toNanos());
	}

	// n calls, a virtual second apart; how many a answered
	private int callsTo(ApplicationContext context, String endpoint, int calls) {
		int answered = 0;
		for (int i = 0; i < calls; i++) {
			ChatResponse response = call(context);
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			answered += endpoint.equals(response.endpoint()) ? 1 : 0;
		}
		return answered;
	}

	private ChatResponse call(ApplicationContext context) {
		this.clock.addAndGet(Duration.ofSeconds(1).toNanos());
		return context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(20));
	}

}
