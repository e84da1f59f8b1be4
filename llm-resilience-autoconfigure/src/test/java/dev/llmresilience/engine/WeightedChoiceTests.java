package dev.llmresilience.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.llmresilience.engine.InProcessRoutes.ScriptedSource;
import dev.llmresilience.spi.BalanceSource;
import io.github.resilience4j.bulkhead.Bulkhead;
import org.junit.jupiter.api.Test;

import static dev.llmresilience.engine.InProcessRoutes.names;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code balance: weighted}, decided by the balancer alone: which endpoint each call tries first, how
 * often, and where the others go, over thousands of calls ordered in process (no call is made;
 * {@code WeightedBalancingTests} shows the same through the gateway and real servers).
 */
class WeightedChoiceTests {

	private static final Map<String, RouteStrategy> WEIGHTED = Map.of("default",
			new RouteStrategy(Balance.WEIGHTED, RouteOrder.PRIORITY));

	private final InProcessRoutes routes = new InProcessRoutes().endpoint("a")
		.endpoint("b")
		.endpoint("c")
		.route("default", "a", "b", "c");

	@Test
	void tenThousandCallsAreSplitAsTheWeightsSayAndCountedForTheChosen() {
		RouteBalancer balancer = new RouteBalancer(this.routes.registry(), WEIGHTED, Map.of("a", 5.0, "b", 3.0, "c", 2.0),
				BalanceSource.seeded(18, () -> 0));
		Map<String, Long> first = orderCalls(balancer, 10_000);
		assertThat(first.get("a") / 10_000.0).isCloseTo(0.5, within(0.015));
		assertThat(first.get("b") / 10_000.0).isCloseTo(0.3, within(0.015));
		assertThat(first.get("c") / 10_000.0).isCloseTo(0.2, within(0.015));
		first.forEach((name, count) -> assertThat(balancer.chosen("default", name)).as(name).isEqualTo(count));

		RouteReport report = balancer.report().get("default");
		assertThat(report.strategy()).isEqualTo(new RouteStrategy(Balance.WEIGHTED, RouteOrder.PRIORITY));
		assertThat(report.calls()).isEqualTo(10_000);
		assertThat(report.endpoints()).extracting(RouteReport.Member::endpoint).containsExactly("a", "b", "c");
		assertThat(report.endpoints()).extracting(RouteReport.Member::weight).containsExactly(5.0, 3.0, 2.0);
		assertThat(report.endpoints()).extracting(RouteReport.Member::chosen)
			.containsExactly(first.get("a"), first.get("b"), first.get("c"));
		assertThat(report.endpoints().get(0).share(report.calls())).isEqualTo(first.get("a") / 10_000.0);
		assertThat(report.endpoints()).extracting(RouteReport.Member::latency).containsOnlyNulls();
		assertThat(balancer.latency("a")).as("measured only on least-latency routes").isNull();
	}

	@Test
	void anEndpointWithoutAConfiguredWeightWeighsOne() {
		RouteBalancer balancer = new RouteBalancer(this.routes.registry(), WEIGHTED, Map.of("a", 2.0),
				BalanceSource.seeded(5, () -> 0));
		Map<String, Long> first = orderCalls(balancer, 8_000);
		assertThat(first.get("a") / 8_000.0).isCloseTo(0.5, within(0.015));
		assertThat(first.get("b") / 8_000.0).isCloseTo(0.25, within(0.015));
		assertThat(balancer.report().get("default").endpoints()).extracting(RouteReport.Member::weight)
			.containsExactly(2.0, 1.0, 1.0);
	}

	@Test
	void theRestOfTheGroupFollowsTheChosenOneInTheRoutesOrder() {
		// weights 1, 1, 1: a draw below 1/3 is a, below 2/3 b, else c
		ScriptedSource source = new ScriptedSource().draws(0.0, 0.5, 0.9);
		RouteBalancer balancer = new RouteBalancer(this.routes.registry(), WEIGHTED, Map.of(), source);
		assertThat(names(order(balancer))).containsExactly("a", "b", "c");
		assertThat(names(order(balancer))).containsExactly("b", "a", "c");
		assertThat(names(order(balancer))).containsExactly("c", "a", "b");
	}

	@Test
	void aDrawOnTheEdgeBetweenTwoWeightsGoesToTheLaterEndpoint() {
		// weights 1 and 3 of 4: a's share is the draws below 1/4, exactly 1/4 is b's
		InProcessRoutes two = new InProcessRoutes().endpoint("a").endpoint("b").route("default", "a", "b");
		ScriptedSource source = new ScriptedSource().draws(0.25, Math.nextDown(0.25), Math.nextDown(1.0), 0.0);
		RouteBalancer balancer = new RouteBalancer(two.registry(), WEIGHTED, Map.of("a", 1.0, "b", 3.0), source);
		assertThat(names(balancer.order("default", two.members("default")))).containsExactly("b", "a");
		assertThat(names(balancer.order("default", two.members("default")))).containsExactly("a", "b");
		assertThat(names(balancer.order("default", two.members("default")))).containsExactly("b", "a");
		assertThat(names(balancer.order("default", two.members("default")))).containsExactly("a", "b");
	}

	@Test
	void aDrawThatRoundingLeavesPastTheLastWeightGoesToTheLastEndpoint() {
		// in doubles, the highest draw times 0.3 + 0.7, less 0.3, less 0.7, is not below zero
		InProcessRoutes two = new InProcessRoutes().endpoint("a").endpoint("b").route("default", "a", "b");
		ScriptedSource source = new ScriptedSource().draws(Math.nextDown(1.0));
		RouteBalancer balancer = new RouteBalancer(two.registry(), WEIGHTED, Map.of("a", 0.3, "b", 0.7), source);
		assertThat(names(balancer.order("default", two.members("default")))).containsExactly("b", "a");
		assertThat(balancer.chosen("default", "b")).isOne();
	}

	@Test
	void anEndpointWhoseBreakerIsOpenIsNeverChosenAndTheOthersShareItsWeight() {
		this.routes.get("a").circuitBreaker().transitionToOpenState();
		RouteBalancer balancer = new RouteBalancer(this.routes.registry(), WEIGHTED, Map.of("a", 8.0),
				BalanceSource.seeded(11, () -> 0));
		Map<String, Long> first = new LinkedHashMap<>();
		for (int i = 0; i < 4_000; i++) {
			List<String> order = names(order(balancer));
			// a keeps its place in the route after the chosen one: the gateway passes it without a call
			assertThat(order).isIn(List.of("b", "a", "c"), List.of("c", "a", "b"));
			first.merge(order.get(0), 1L, Long::sum);
		}
		assertThat(first.get("b") / 4_000.0).isCloseTo(0.5, within(0.025));
		assertThat(balancer.chosen("default", "a")).isZero();

		this.routes.get("a").circuitBreaker().transitionToClosedState();
		assertThat(orderCalls(balancer, 1_000).get("a")).as("a's calls of 1,000 once it closed").isBetween(750L, 850L);
	}

	@Test
	void anEndpointWithAFullBulkheadIsNotChosenUntilASlotIsFree() {
		InProcessRoutes two = new InProcessRoutes().endpoint("a", 0, null, 1).endpoint("b").route("default", "a", "b");
		RouteBalancer balancer = new RouteBalancer(two.registry(), WEIGHTED, Map.of("a", 100.0),
				BalanceSource.seeded(2, () -> 0));
		Bulkhead bulkhead = two.get("a").bulkhead();
		assertThat(bulkhead.tryAcquirePermission()).isTrue();
		for (int i = 0; i < 100; i++) {
			assertThat(names(balancer.order("default", two.members("default")))).containsExactly("b", "a");
		}
		bulkhead.onComplete();
		assertThat(names(balancer.order("default", two.members("default")))).containsExactly("a", "b");
	}

	@Test
	void theOnlyEndpointThatAdmitsCallsIsChosenWithoutADraw() {
		this.routes.get("a").circuitBreaker().transitionToOpenState();
		this.routes.get("b").circuitBreaker().transitionToForcedOpenState();
		// no random number to draw: drawing one fails the test
		RouteBalancer balancer = new RouteBalancer(this.routes.registry(), WEIGHTED, Map.of(), new ScriptedSource());
		assertThat(names(order(balancer))).containsExactly("c", "a", "b");
		assertThat(balancer.chosen("default", "c")).isOne();
	}

	@Test
	void withNoEndpointAdmittingCallsTheRouteKeepsItsOrder() {
		this.routes.get("a").circuitBreaker().transitionToOpenState();
		this.routes.get("b").circuitBreaker().transitionToOpenState();
		this.routes.get("c").circuitBreaker().transitionToOpenState();
		RouteBalancer balancer = new RouteBalancer(this.routes.registry(), WEIGHTED, Map.of(), new ScriptedSource());
		assertThat(names(order(balancer))).containsExactly("a", "b", "c");
		assertThat(balancer.chosen("default", "a")).isOne();
	}

	@Test
	void ofAGroupOfMoreThanSixtyFourTheFirstSixtyFourShareItsCallsAndTheRestFollow() {
		InProcessRoutes wide = new InProcessRoutes().endpoint("first", 0, null, 10);
		List<String> route = new ArrayList<>(List.of("first"));
		for (int i = 0; i < 65; i++) {
			String name = String.format(Locale.ROOT, "e%02d", i);
			wide.endpoint(name, 1, null, 10);
			route.add(name);
		}
		wide.route("default", route.toArray(String[]::new));
		RouteBalancer balancer = new RouteBalancer(wide.registry(), WEIGHTED, Map.of(), BalanceSource.seeded(64, () -> 0));
		List<LlmEndpoint> members = wide.members("default");
		Map<String, Long> first = new LinkedHashMap<>();
		Map<String, Long> second = new LinkedHashMap<>();
		for (int i = 0; i < 32_000; i++) {
			List<LlmEndpoint> order = balancer.order("default", members);
			first.merge(order.get(0).name(), 1L, Long::sum);
			second.merge(order.get(1).name(), 1L, Long::sum);
		}
		assertThat(first).containsOnlyKeys("first");
		assertThat(second).hasSize(64).doesNotContainKey("e64");
		// a 64th of the calls each: 500 of 32,000
		assertThat(second.values()).allSatisfy((calls) -> assertThat(calls).isBetween(400L, 600L));
	}

	private List<LlmEndpoint> order(RouteBalancer balancer) {
		return balancer.order("default", this.routes.members("default"));
	}

	// each call's first endpoint, by name, checking that each order is the whole route
	private Map<String, Long> orderCalls(RouteBalancer balancer, int calls) {
		Map<String, Long> first = new LinkedHashMap<>(Map.of("a", 0L, "b", 0L, "c", 0L));
		for (int i = 0; i < calls; i++) {
			List<String> order = names(order(balancer));
			assertThat(order).containsExactlyInAnyOrder("a", "b", "c");
			first.merge(order.get(0), 1L, Long::sum);
		}
		return first;
	}

}
