package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.RouteBalanceDescriptor.ShareDescriptor;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.BalanceSource;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

import static dev.llmresilience.engine.BalancedUpstreams.balancing;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code balance: weighted} over real local servers: the split follows the weights, a failed
 * choice falls back through the rest of the route in its order, and priorities still rank groups.
 */
class WeightedBalancingTests {

	private final BalancedUpstreams upstreams = new BalancedUpstreams("a", "b", "c");

	@AfterEach
	void close() {
		this.upstreams.close();
	}

	@Test
	void thousandCallsAreSplitAsTheWeightsSayWithinThreePoints() {
		this.upstreams.runner("llm.routes.default.endpoints=a,b,c", "llm.routes.default.balance=weighted",
				"llm.endpoints.a.weight=5", "llm.endpoints.b.weight=3", "llm.endpoints.c.weight=2")
			.withBean(BalanceSource.class, () -> BalanceSource.seeded(18, System::nanoTime))
			.run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				// eight at a time: each call draws one number of the seeded sequence, so the split is
				// the same whatever order the calls draw them in
				List<ChatResponse> responses = Flux.range(0, 1000)
					.flatMap((i) -> gateway.chat(ChatRequest.ofUser("call " + i)), 8)
					.collectList()
					.block(Duration.ofMinutes(2));
				assertThat(responses).hasSize(1000).allSatisfy((response) -> assertThat(response.tier()).isEqualTo(Tier.PRIMARY));
				Map<String, Long> answered = responses.stream()
					.collect(Collectors.groupingBy(ChatResponse::endpoint, Collectors.counting()));
				assertThat(this.upstreams.get("a").requests() / 1000.0).isCloseTo(0.5, within(0.03));
				assertThat(this.upstreams.get("b").requests() / 1000.0).isCloseTo(0.3, within(0.03));
				assertThat(this.upstreams.get("c").requests() / 1000.0).isCloseTo(0.2, within(0.03));
				assertThat(answered).containsEntry("a", this.upstreams.get("a").requests())
					.containsEntry("b", this.upstreams.get("b").requests())
					.containsEntry("c", this.upstreams.get("c").requests());

				RouteBalanceDescriptor route = balancing(context, "default");
				assertThat(route.balance()).isEqualTo("weighted");
				assertThat(route.order()).isEqualTo("priority");
				assertThat(route.calls()).isEqualTo(1000);
				assertThat(route.endpoints()).containsOnlyKeys("a", "b", "c");
				route.endpoints().forEach((name, share) -> {
					assertThat(share.chosen()).as(name).isEqualTo(answered.get(name));
					assertThat(share.share()).as(name).isCloseTo(answered.get(name) / 1000.0, within(1e-9));
					assertThat(share.latencyMillis()).as("measured only for least-latency").isNull();
				});
				assertThat(route.endpoints().values()).extracting(ShareDescriptor::weight).containsExactly(5.0, 3.0, 2.0);
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				assertThat(meters.get("llm.gateway.route.choices")
					.tags("llm.route", "default", "llm.endpoint", "a", "llm.balance", "weighted", "llm.order", "priority")
					.functionCounter()
					.count()).isEqualTo(answered.get("a").doubleValue());
			});
	}

	@Test
	void aChoiceThatFailsFallsBackThroughTheRestOfTheRouteInItsOrder() {
		this.upstreams.get("a").failWith(500);
		this.upstreams.get("b").failWith(503);
		this.upstreams.runner("llm.routes.default.endpoints=a,b,c", "llm.routes.default.balance=weighted")
			.withBean(BalanceSource.class, () -> BalanceSource.seeded(7, System::nanoTime))
			.run((context) -> {
				Map<String, List<String>> walks = Flux.range(0, 15)
					.concatMap((i) -> context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("call " + i)))
					.map((response) -> {
						assertThat(response.endpoint()).isEqualTo("c");
						List<String> walk = response.attempts().stream().map(Attempt::endpoint).toList();
						assertThat(response.tier()).isEqualTo(walk.get(0).equals("c") ? Tier.PRIMARY : Tier.FALLBACK);
						return walk;
					})
					.collect(Collectors.toMap((walk) -> walk.get(0), Function.identity(), (one, other) -> one))
					.block(Duration.ofSeconds(30));
				// chosen first, then the rest of the route as listed, whichever was chosen
				assertThat(walks).containsOnlyKeys("a", "b", "c")
					.containsEntry("a", List.of("a", "b", "c"))
					.containsEntry("b", List.of("b", "a", "c"))
					.containsEntry("c", List.of("c"));
			});
	}

	@Test
	void onlyEndpointsOfEqualPriorityShareTheLoad() {
		this.upstreams.runner("llm.routes.default.endpoints=a,b,c", "llm.routes.default.balance=weighted",
				"llm.endpoints.a.priority=0", "llm.endpoints.b.priority=1", "llm.endpoints.c.priority=1")
			.withBean(BalanceSource.class, () -> BalanceSource.seeded(3, System::nanoTime))
			.run((context) -> {
				for (int i = 0; i < 20; i++) {
					ChatResponse response = context.getBean(LlmGateway.class).chat("call " + i).block(Duration.ofSeconds(10));
					assertThat(response.endpoint()).isEqualTo("a");
					assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
				}
				this.upstreams.get("a").failWith(500);
				for (int i = 0; i < 20; i++) {
					ChatResponse response = context.getBean(LlmGateway.class).chat("again " + i).block(Duration.ofSeconds(10));
					assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
					assertThat(response.attempts().get(0).endpoint()).isEqualTo("a");
				}
				assertThat(this.upstreams.get("b").requests()).as("b's share of the fallbacks").isBetween(3L, 17L);
				assertThat(this.upstreams.get("c").requests()).as("c's share of the fallbacks").isBetween(3L, 17L);
				assertThat(balancing(context, "default").endpoints().get("a").chosen()).isEqualTo(40);
			});
	}

}
