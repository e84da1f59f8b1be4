package dev.llmresilience.engine;

import java.time.Duration;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;

import static dev.llmresilience.engine.MeterTags.BALANCE;
import static dev.llmresilience.engine.MeterTags.ENDPOINT;
import static dev.llmresilience.engine.MeterTags.ORDER;
import static dev.llmresilience.engine.MeterTags.ROUTE;

/**
 * Binds the meters of balancing within a route: per route and endpoint, the calls the route's
 * balancing chose it to go first for, tagged with the route's strategy; and the latency estimate
 * of every endpoint of a least-latency route.
 */
final class RouteBalanceMeters implements MeterBinder {

	private final ObjectProvider<RouteBalancer> balancer;

	// looked up when the meters are bound: making the binder, which Boot may do while it sets up the
	// registry, creates none of the gateway's beans
	RouteBalanceMeters(ObjectProvider<RouteBalancer> balancer) {
		this.balancer = balancer;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.balancer.ifAvailable((routes) -> routes.report().forEach((route, report) -> {
			for (RouteReport.Member member : report.endpoints()) {
				FunctionCounter.builder("llm.gateway.route.choices", routes, (b) -> b.chosen(route, member.endpoint()))
					.description("Calls for which the route's balancing chose this endpoint to go first")
					.tags(ROUTE, route, ENDPOINT, member.endpoint(), BALANCE, report.strategy().balance().value(), ORDER,
							report.strategy().order().value())
					.register(registry);
				if (member.latency() != null) {
					Gauge.builder("llm.endpoint.latency.estimate", routes, (b) -> seconds(b.latency(member.endpoint())))
						.description("Peak-EWMA time to first token that least-latency balancing compares")
						.baseUnit("seconds")
						.tags(ENDPOINT, member.endpoint())
						.register(registry);
				}
			}
		}));
	}

	private static double seconds(@Nullable Duration duration) {
		return (duration != null) ? duration.toNanos() / 1e9 : Double.NaN;
	}

}
