package dev.llmresilience.engine;

import java.time.Duration;
import java.util.Map;

import dev.llmresilience.engine.InProcessRoutes.ScriptedSource;
import org.junit.jupiter.api.Test;

import static dev.llmresilience.engine.InProcessRoutes.names;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * {@code balance: least-latency}, decided by the balancer alone: of the two endpoints drawn, the one
 * with the lower latency estimate times its calls in flight goes first. The latencies are what each
 * endpoint's breaker recorded, the random numbers and the clock are the test's (no call is made;
 * {@code LeastLatencyBalancingTests} shows the same through the gateway and real servers).
 */
class LeastLatencyChoiceTests {

	private static final Map<String, RouteStrategy> LEAST_LATENCY = Map.of("default",
			new RouteStrategy(Balance.LEAST_LATENCY, RouteOrder.PRIORITY));

	private final ScriptedSource source = new ScriptedSource();

	@Test
	void ofTheTwoDrawnTheFasterGoesFirstWhicheverWasDrawnFirst() {
		InProcessRoutes routes = two();
		RouteBalancer balancer = balancer(routes);
		routes.answered("a", 400);
		routes.answered("b", 10);
		// (0, 0) draws a then b; (0.6, 0) draws b then a
		this.source.draws(0.0, 0.0, 0.6, 0.0);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("b", "a");
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("b", "a");
		assertThat(balancer.chosen("default", "b")).isEqualTo(2);
		assertThat(this.source.drewAll()).isTrue();
	}

	@Test
	void ofTwoEquallyFastTheOneDrawnFirstGoesFirst() {
		InProcessRoutes routes = two();
		RouteBalancer balancer = balancer(routes);
		this.source.draws(0.6, 0.0, 0.0, 0.0);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("b", "a");
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("a", "b");
		routes.answered("a", 50);
		routes.answered("b", 50);
		this.source.draws(0.6, 0.0, 0.0, 0.0);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("b", "a");
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("a", "b");
	}

	@Test
	void aCallInFlightDoublesAnEndpointsLoadSoAFastButBusyOneIsPassedOver() {
		InProcessRoutes routes = two();
		RouteBalancer balancer = balancer(routes);
		routes.answered("a", 100);
		routes.answered("b", 150);
		this.source.draws(0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("a", "b");
		assertThat(routes.get("a").bulkhead().tryAcquirePermission()).isTrue();
		// a: 100 ms times 2; b: 150 ms times 1
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("b", "a");
		assertThat(routes.get("b").bulkhead().tryAcquirePermission()).isTrue();
		// a: 100 ms times 2; b: 150 ms times 2
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("a", "b");
	}

	@Test
	void endpointsNotYetMeasuredAreToldApartByTheirCallsInFlight() {
		InProcessRoutes routes = two();
		RouteBalancer balancer = balancer(routes);
		assertThat(routes.get("a").bulkhead().tryAcquirePermission()).isTrue();
		this.source.draws(0.0, 0.0);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("b", "a");
	}

	@Test
	void aSlowEndpointLeftAloneDecaysUntilItIsTriedAgain() {
		InProcessRoutes routes = two();
		RouteBalancer balancer = balancer(routes);
		routes.answered("a", 400);
		this.source.advance(Duration.ofSeconds(40));
		routes.answered("b", 10);
		assertThat(balancer.latency("a")).isEqualTo(Duration.ofNanos((long) (400e6 * Math.exp(-4))));
		assertThat(balancer.latency("b")).isEqualTo(Duration.ofMillis(10));
		// a's 400 ms, 40 s (four decays) old, is about 7 ms now: faster than b's fresh 10 ms
		this.source.draws(0.6, 0.0);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("a", "b");

		RouteReport.Member a = balancer.report().get("default").endpoints().get(0);
		assertThat(a.latency()).isEqualTo(balancer.latency("a"));
		assertThat(balancer.latency("c")).as("in no least-latency route").isNull();
	}

	@Test
	void aFailureRaisesTheEstimateSoTheCallsGoElsewhere() {
		InProcessRoutes routes = two();
		RouteBalancer balancer = balancer(routes);
		routes.answered("a", 10);
		routes.answered("b", 50);
		routes.failed("a", 2_000);
		assertThat(balancer.latency("a")).isEqualTo(Duration.ofSeconds(2));
		this.source.draws(0.0, 0.0);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("b", "a");
	}

	@Test
	void theLatencyEstimateForgetsWithTheDefaultDecayOfTenSeconds() {
		InProcessRoutes routes = two();
		RouteBalancer balancer = new RouteBalancer(routes.registry(), LEAST_LATENCY, Map.of(), this.source);
		routes.answered("a", 400);
		this.source.advance(Duration.ofSeconds(10));
		assertThat(balancer.latency("a").toNanos()).isCloseTo((long) (400e6 / Math.E), within(1L));
	}

	@Test
	void ofThreeTheTwoComparedAreTheTwoDrawn() {
		InProcessRoutes routes = new InProcessRoutes().endpoint("a")
			.endpoint("b")
			.endpoint("c")
			.route("default", "a", "b", "c");
		RouteBalancer balancer = balancer(routes);
		routes.answered("a", 5);
		routes.answered("b", 400);
		routes.answered("c", 10);
		// first of three: b; second of the two others: c
		this.source.draws(0.5, 0.5);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("c", "a", "b");
		// first: c; second of the others: b
		this.source.draws(0.9, 0.9);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("c", "a", "b");
		// first: b; second: a
		this.source.draws(0.5, 0.0);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("a", "b", "c");
	}

	@Test
	void theDrawIsAmongTheEndpointsThatAdmitCallsOnly() {
		InProcessRoutes routes = new InProcessRoutes().endpoint("a")
			.endpoint("b")
			.endpoint("c")
			.route("default", "a", "b", "c");
		RouteBalancer balancer = balancer(routes);
		routes.answered("a", 50);
		routes.answered("b", 1);
		routes.answered("c", 10);
		routes.get("b").circuitBreaker().transitionToOpenState();
		// of a and c: first c, second a; then first a, second c
		this.source.draws(0.6, 0.0, 0.0, 0.0);
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("c", "a", "b");
		assertThat(names(balancer.order("default", routes.members("default")))).containsExactly("c", "a", "b");
		assertThat(balancer.chosen("default", "b")).isZero();
	}

	private RouteBalancer balancer(InProcessRoutes routes) {
		return new RouteBalancer(routes.registry(), LEAST_LATENCY, Map.of(), this.source, Duration.ofSeconds(10));
	}

	private static InProcessRoutes two() {
		return new InProcessRoutes().endpoint("a").endpoint("b").endpoint("c").route("default", "a", "b");
	}

}
