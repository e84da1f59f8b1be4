package dev.llmresilience.engine;

import java.util.DoubleSummaryStatistics;
import java.util.List;
import java.util.Map;
import java.util.stream.DoubleStream;

import dev.llmresilience.engine.InProcessRoutes.ScriptedSource;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.spi.BalanceSource;
import org.junit.jupiter.api.Test;

import static dev.llmresilience.engine.InProcessRoutes.names;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the balancer groups a route (by priority, or by price with {@code cheapest-first}), that only
 * a group's own endpoints share its calls, and which routes it leaves as they are; decided in process,
 * with every random number the test's, so a draw the route does not need fails the test.
 */
class RouteGroupsTests {

	private static final RouteStrategy WEIGHTED = new RouteStrategy(Balance.WEIGHTED, RouteOrder.PRIORITY);

	private final ScriptedSource source = new ScriptedSource();

	@Test
	void onlyEndpointsOfEqualPriorityShareAGroupAndTheFirstGroupIsAlwaysTriedFirst() {
		InProcessRoutes routes = new InProcessRoutes().endpoint("a", 0, null, 10)
			.endpoint("b", 1, null, 10)
			.endpoint("c", 1, null, 10)
			.endpoint("d", 2, null, 10)
			.route("default", "a", "b", "c", "d");
		RouteBalancer balancer = new RouteBalancer(routes.registry(), Map.of("default", WEIGHTED), Map.of(), this.source);
		// one draw a call, for the one group of two
		this.source.draws(0.9, 0.1);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("a", "c", "b", "d");
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("a", "b", "c", "d");
		assertThat(this.source.drewAll()).isTrue();
		assertThat(balancer.chosen("default", "a")).isEqualTo(2);
		assertThat(balancer.chosen("default", "c")).isZero();
	}

	@Test
	void aRouteWhoseGroupsHaveOneEndpointEachKeepsItsOrderWithoutADraw() {
		InProcessRoutes routes = new InProcessRoutes().endpoint("a", 0, null, 10)
			.endpoint("b", 1, null, 10)
			.endpoint("c", 2, null, 10)
			.route("default", "a", "b", "c");
		RouteBalancer balancer = new RouteBalancer(routes.registry(), Map.of("default", WEIGHTED), Map.of(), this.source);
		for (int i = 0; i < 3; i++) {
			assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("a", "b", "c");
		}
		assertThat(balancer.chosen("default", "a")).isEqualTo(3);
		assertThat(balancer.report().get("default").calls()).isEqualTo(3);
	}

	@Test
	void aPriorityRouteKeepsItsOrderAndCountsItsFirstEndpoint() {
		InProcessRoutes routes = new InProcessRoutes().endpoint("a").endpoint("b").route("default", "a", "b");
		RouteBalancer balancer = new RouteBalancer(routes.registry(), Map.of(), Map.of(), this.source);
		routes.get("a").circuitBreaker().transitionToOpenState();
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("a", "b");
		assertThat(balancer.chosen("default", "a")).isOne();
		assertThat(balancer.report().get("default").strategy()).isEqualTo(RouteStrategy.PRIORITY);

		RouteBalancer priority = RouteBalancer.priority(routes.registry());
		assertThat(names(priority.order("default", routes.members("default")))).containsExactly("a", "b");
		assertThat(priority.report()).containsOnlyKeys("default");
	}

	@Test
	void cheapestFirstOrdersByInputPlusOutputPriceWithTheUnpricedLast() {
		InProcessRoutes routes = new InProcessRoutes().endpoint("premium", 0, price(10, 30), 10)
			.endpoint("local", 0, null, 10)
			.endpoint("mid", 0, price(3, 15), 10)
			.endpoint("cheap", 0, price(0.15, 0.6), 10)
			.route("default", "premium", "local", "mid", "cheap");
		RouteBalancer balancer = new RouteBalancer(routes.registry(),
				Map.of("default", new RouteStrategy(Balance.PRIORITY, RouteOrder.CHEAPEST_FIRST)), Map.of(), this.source);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("cheap", "mid", "premium",
				"local");
		assertThat(balancer.report().get("default").endpoints()).extracting(RouteReport.Member::endpoint)
			.containsExactly("cheap", "mid", "premium", "local");
	}

	@Test
	void pricesThatAddUpToTheSameFormOneGroupWhateverTheirPartsAndPriorities() {
		// 0.1 + 0.65 and 0.15 + 0.6 differ in the last bit as doubles; the priorities do not rank a price order
		InProcessRoutes routes = new InProcessRoutes().endpoint("premium", 0, price(10, 30), 10)
			.endpoint("local", 3, price(0.1, 0.65), 10)
			.endpoint("mid", 0, price(3, 15), 10)
			.endpoint("cheap", 1, price(0.15, 0.6), 10)
			.route("default", "premium", "local", "mid", "cheap");
		RouteBalancer balancer = new RouteBalancer(routes.registry(),
				Map.of("default", new RouteStrategy(Balance.WEIGHTED, RouteOrder.CHEAPEST_FIRST)), Map.of(), this.source);
		this.source.draws(0.0, 0.9);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("local", "cheap", "mid",
				"premium");
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("cheap", "local", "mid",
				"premium");
		assertThat(this.source.drewAll()).isTrue();
	}

	@Test
	void aRouteTheBalancerDoesNotKnowOrThatIsEmptyIsLeftAsItCame() {
		InProcessRoutes routes = new InProcessRoutes().endpoint("a").endpoint("b").route("default", "a", "b")
			.route("none");
		RouteBalancer balancer = new RouteBalancer(routes.registry(), Map.of("default", WEIGHTED, "none", WEIGHTED),
				Map.of(), this.source);
		List<LlmEndpoint> given = routes.members("default");
		assertThat(balancer.order("elsewhere", given)).isSameAs(given);
		assertThat(balancer.order("none", List.of())).isEmpty();
		assertThat(balancer.report()).containsOnlyKeys("default");
		assertThat(balancer.chosen("elsewhere", "a")).isZero();
		assertThat(balancer.chosen("default", "z")).isZero();
	}

	@Test
	void aShareIsTheChosenCallsOverTheRoutesAndNothingBeforeAnyCall() {
		RouteReport.Member member = new RouteReport.Member("a", 1, 3, null);
		assertThat(member.share(4)).isEqualTo(0.75);
		assertThat(member.share(0)).isZero();
		assertThat(new RouteReport(RouteStrategy.PRIORITY, List.of(member, new RouteReport.Member("b", 1, 2, null))).calls())
			.isEqualTo(5);
	}

	@Test
	void configurationNamesAStrategyInAnyCaseWithDashesOrUnderscores() {
		assertThat(Balance.named("least-latency")).isEqualTo(Balance.LEAST_LATENCY);
		assertThat(Balance.named(" LEAST_LATENCY ")).isEqualTo(Balance.LEAST_LATENCY);
		assertThat(Balance.named("Weighted")).isEqualTo(Balance.WEIGHTED);
		assertThat(Balance.named("random")).isNull();
		assertThat(RouteOrder.named("cheapest_first")).isEqualTo(RouteOrder.CHEAPEST_FIRST);
		assertThat(RouteOrder.named("priority")).isEqualTo(RouteOrder.PRIORITY);
		assertThat(RouteOrder.named("fastest")).isNull();
		assertThat(Balance.LEAST_LATENCY.value()).isEqualTo("least-latency");
		assertThat(RouteOrder.CHEAPEST_FIRST.value()).isEqualTo("cheapest-first");
	}

	@Test
	void aSeededSourceRepeatsItsSequenceAndReadsTheGivenClock() {
		BalanceSource one = BalanceSource.seeded(42, () -> 7);
		BalanceSource other = BalanceSource.seeded(42, () -> 7);
		for (int i = 0; i < 5; i++) {
			double next = one.nextDouble();
			assertThat(next).isEqualTo(other.nextDouble()).isBetween(0.0, 1.0).isNotEqualTo(1.0);
		}
		assertThat(one.nanoTime()).isEqualTo(7);
		BalanceSource system = BalanceSource.system();
		DoubleSummaryStatistics drawn = DoubleStream.generate(system::nextDouble).limit(1_000).summaryStatistics();
		assertThat(drawn.getMin()).isBetween(0.0, 0.1);
		assertThat(drawn.getMax()).isBetween(0.9, 1.0).isNotEqualTo(1.0);
		long before = system.nanoTime();
		assertThat(system.nanoTime()).isGreaterThanOrEqualTo(before).isNotZero();
	}

	private static EndpointSettings.Price price(double input, double output) {
		return new EndpointSettings.Price(input, output);
	}

}
