package dev.llmresilience.engine;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmresilience.spi.BalanceSource;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

/**
 * Orders each call's endpoints by its route's {@link RouteStrategy}: the route is split into groups
 * (consecutive endpoints of equal priority, or of equal price with {@link RouteOrder#CHEAPEST_FIRST}),
 * one endpoint of each group is chosen to go first (by weight, or by the lower latency of two drawn
 * at random), and the rest of the group follows it in the route's order, so that fallback still
 * walks the whole route. An endpoint that would not take a call now (breaker open, probes in use,
 * bulkhead full) is never chosen. Latency is the time to first token the endpoint's circuit breaker
 * records for every attempt (the half-open probes included), as a {@link PeakEwma}.
 */
public final class RouteBalancer {

	/** How fast a latency estimate forgets: its weight falls to 1/e in this time. */
	public static final Duration DEFAULT_DECAY = Duration.ofSeconds(10);

	private final Map<String, RoutePlan> plans = new LinkedHashMap<>();

	private final Map<String, PeakEwma> latencies = new LinkedHashMap<>();

	private final BalanceSource source;

	/**
	 * A balancer with the default latency decay.
	 * @param registry the endpoints and routes
	 * @param strategies the strategy of each route; a route not named here keeps its order
	 * @param weights each endpoint's weight; 1 for an endpoint not named here
	 * @param source the random numbers and the clock
	 */
	public RouteBalancer(EndpointRegistry registry, Map<String, RouteStrategy> strategies, Map<String, Double> weights,
			BalanceSource source) {
		this(registry, strategies, weights, source, DEFAULT_DECAY);
	}

	/**
	 * A balancer.
	 * @param registry the endpoints and routes
	 * @param strategies the strategy of each route; a route not named here keeps its order
	 * @param weights each endpoint's weight; 1 for an endpoint not named here
	 * @param source the random numbers and the clock
	 * @param decay how fast a latency estimate forgets
	 */
	public RouteBalancer(EndpointRegistry registry, Map<String, RouteStrategy> strategies, Map<String, Double> weights,
			BalanceSource source, Duration decay) {
		this.source = source;
		registry.routeNames().keySet().forEach((route) -> {
			List<LlmEndpoint> endpoints = registry.route(route);
			RouteStrategy strategy = strategies.getOrDefault(route, RouteStrategy.PRIORITY);
			if (endpoints == null || endpoints.isEmpty()) {
				return;
			}
			if (strategy.balance() == Balance.LEAST_LATENCY) {
				endpoints.forEach((endpoint) -> this.latencies.computeIfAbsent(endpoint.name(),
						(name) -> measured(endpoint.circuitBreaker(), decay)));
			}
			this.plans.put(route, new RoutePlan(strategy, endpoints, weights, this.latencies));
		});
	}

	/**
	 * A balancer that keeps every route's order.
	 * @param registry the endpoints and routes
	 * @return the balancer
	 */
	public static RouteBalancer priority(EndpointRegistry registry) {
		return new RouteBalancer(registry, Map.of(), Map.of(), BalanceSource.system());
	}

	/**
	 * The order in which one call tries a route's endpoints.
	 * @param route the route's name
	 * @param endpoints the route's endpoints
	 * @return the chosen endpoint first; {@code endpoints} itself for a route the balancer does not know
	 */
	public List<LlmEndpoint> order(String route, List<LlmEndpoint> endpoints) {
		RoutePlan plan = this.plans.get(route);
		return (plan != null) ? plan.order(this.source) : endpoints;
	}

	/**
	 * Every route's strategy and the calls each endpoint was chosen for.
	 * @return the reports by route
	 */
	public Map<String, RouteReport> report() {
		long now = this.source.nanoTime();
		Map<String, RouteReport> reports = new LinkedHashMap<>();
		this.plans.forEach((route, plan) -> reports.put(route, plan.report(now)));
		return Collections.unmodifiableMap(reports);
	}

	/**
	 * The calls a route has tried an endpoint first for.
	 * @param route the route's name
	 * @param endpoint the endpoint's name
	 * @return the count; 0 for a route or an endpoint the balancer does not know
	 */
	public long chosen(String route, String endpoint) {
		RoutePlan plan = this.plans.get(route);
		return (plan != null) ? plan.chosen(endpoint) : 0;
	}

	/**
	 * An endpoint's latency estimate now.
	 * @param endpoint the endpoint's name
	 * @return the estimate, or {@code null} when it is in no {@link Balance#LEAST_LATENCY} route
	 */
	public @Nullable Duration latency(String endpoint) {
		PeakEwma latency = this.latencies.get(endpoint);
		return (latency != null) ? Duration.ofNanos((long) latency.estimate(this.source.nanoTime())) : null;
	}

	private PeakEwma measured(CircuitBreaker breaker, Duration decay) {
		PeakEwma latency = new PeakEwma(decay);
		// what the breaker records is the time to first token (the whole answer from a client that does not stream)
		breaker.getEventPublisher()
			.onSuccess((event) -> latency.observe(event.getElapsedDuration().toNanos(), this.source.nanoTime()))
			.onError((event) -> latency.penalize(event.getElapsedDuration().toNanos(), this.source.nanoTime()));
		return latency;
	}

}
