package dev.llmresilience.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmresilience.spi.SharedState;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * The {@code llm} health contributor: one entry per endpoint (breaker state, failure rate) and the
 * routes whose every endpoint is open. It reports UP even then, unless told otherwise: a provider's
 * outage is not this application's, and a DOWN would take every replica out of the load balancer at
 * once, while each replica can still answer BUSY (or from another route). With
 * {@code llm.health.down-when-route-unavailable=true} it reports DOWN while any route has no
 * endpoint whose breaker lets calls through. The {@code routes} detail shows how degraded each
 * route's answers have been (it does not change the status: a fallback is the gateway working).
 * Its {@code sharedState} detail says whether the state the replicas share is available; shared
 * state that is unavailable never makes it DOWN, since every replica then goes on with its own.
 */
class LlmHealthIndicator extends AbstractHealthIndicator {

	private final EndpointRegistry endpoints;

	private final boolean downWhenRouteUnavailable;

	private final @Nullable DegradationWatch degradation;

	private final SharedState shared;

	/**
	 * Create the indicator, with nothing shared.
	 * @param endpoints the endpoints and routes
	 * @param downWhenRouteUnavailable report DOWN when every endpoint of a route is open
	 */
	public LlmHealthIndicator(EndpointRegistry endpoints, boolean downWhenRouteUnavailable) {
		this(endpoints, downWhenRouteUnavailable, null, SharedState.LOCAL);
	}

	/**
	 * Create the indicator.
	 * @param endpoints the endpoints and routes
	 * @param downWhenRouteUnavailable report DOWN when every endpoint of a route is open
	 * @param degradation the routes' degradation watch, whose state becomes the {@code routes} detail,
	 * or {@code null}
	 * @param shared the state the replicas share
	 */
	public LlmHealthIndicator(EndpointRegistry endpoints, boolean downWhenRouteUnavailable,
			@Nullable DegradationWatch degradation, SharedState shared) {
		super("LLM endpoints health check failed");
		this.endpoints = endpoints;
		this.downWhenRouteUnavailable = downWhenRouteUnavailable;
		this.degradation = degradation;
		this.shared = shared;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Map<String, Object> endpoints = new LinkedHashMap<>();
		for (LlmEndpoint endpoint : this.endpoints.endpoints()) {
			CircuitBreaker breaker = endpoint.circuitBreaker();
			endpoints.put(endpoint.name(), Map.of("state", breaker.getState().name(), "failureRate",
					breaker.getMetrics().getFailureRate()));
		}
		List<String> unavailable = new ArrayList<>();
		this.endpoints.routeNames().forEach((route, members) -> {
			boolean allOpen = members.stream()
				.map(this.endpoints::endpoint)
				.allMatch((endpoint) -> endpoint != null && isOpen(endpoint.circuitBreaker().getState()));
			if (allOpen) {
				unavailable.add(route);
			}
		});
		if (this.downWhenRouteUnavailable && !unavailable.isEmpty()) {
			builder.down();
		}
		else {
			builder.up();
		}
		builder.withDetail("endpoints", endpoints).withDetail("unavailableRoutes", unavailable);
		if (this.degradation != null) {
			builder.withDetail("routes", RouteDegradationDescriptor.of(this.degradation));
		}
		builder.withDetail("sharedState", describe(this.shared.status()));
	}

	private static Map<String, Object> describe(SharedState.Status status) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("type", status.type());
		details.put("available", status.available());
		if (status.replica() != null) {
			details.put("replica", status.replica());
			details.put("replicas", status.replicas());
		}
		if (!status.available()) {
			details.put("unavailableSince", String.valueOf(status.unavailableSince()));
			details.put("problem", String.valueOf(status.problem()));
			details.put("meanwhile", "each replica goes on with its own state; it is reconciled when Redis is back");
		}
		return details;
	}

	private static boolean isOpen(CircuitBreaker.State state) {
		return state == CircuitBreaker.State.OPEN || state == CircuitBreaker.State.FORCED_OPEN;
	}

}
