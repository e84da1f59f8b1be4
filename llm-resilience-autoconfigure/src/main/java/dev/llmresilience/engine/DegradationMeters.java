package dev.llmresilience.engine;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;

import static dev.llmresilience.engine.MeterTags.ROUTE;

/**
 * Binds the meters of each route's degradation: the share of its answers that were degraded over
 * {@code llm.degradation.window}, and how long it has answered only degraded.
 */
final class DegradationMeters implements MeterBinder {

	private final ObjectProvider<DegradationWatch> watch;

	// looked up when the meters are bound: making the binder, which Boot may do while it sets up the
	// registry, creates none of the gateway's beans
	DegradationMeters(ObjectProvider<DegradationWatch> watch) {
		this.watch = watch;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.watch.ifAvailable((watch) -> watch.routes().keySet().forEach((route) -> {
			Gauge.builder("llm.gateway.degraded.share", watch, (w) -> share(w.route(route)))
				.description("Share of the route's answers that were degraded (any tier but PRIMARY) over llm.degradation.window")
				.tag(ROUTE, route)
				.register(registry);
			Gauge.builder("llm.gateway.degraded.duration", watch, (w) -> w.route(route).onlyDegradedFor().toMillis() / 1000.0)
				.description("How long the route has answered only degraded; 0 once its first endpoint answers")
				.tag(ROUTE, route)
				.baseUnit("seconds")
				.register(registry);
		}));
	}

	// No answer in the window is no share at all, not 0 % degraded.
	private static double share(RouteDegradation route) {
		return (route.degradedShare() != null) ? route.degradedShare() : Double.NaN;
	}

}
