package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.spi.DefaultCallObservationConvention;
import io.github.resilience4j.micrometer.tagged.TaggedBulkheadMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedRetryMetrics;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the gateway's Micrometer meters, and of Resilience4j's own meters for our
 * breakers, retries and bulkheads when they live in registries of our own (the application's
 * Resilience4j integration publishes those of its registries itself).
 */
@AutoConfiguration(after = LlmAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration" })
@ConditionalOnClass({ MeterRegistry.class, TaggedCircuitBreakerMetrics.class })
@ConditionalOnBean({ MeterRegistry.class, ResilienceRegistries.class })
public final class LlmMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LlmMetrics llmMetrics(MeterRegistry meterRegistry) {
		return new LlmMetrics(meterRegistry);
	}

	@Bean
	MeterBinder llmGuardMetrics(ObjectProvider<DeferredQueue> deferred, ObjectProvider<CallVolumeGuard> guard,
			ObjectProvider<BudgetGuard> budget) {
		return (meterRegistry) -> {
			deferred.ifAvailable((queue) -> {
				Gauge.builder("llm.gateway.deferred.pending", queue, DeferredQueue::pending)
					.description("Deferred requests waiting for a background attempt")
					.register(meterRegistry);
				FunctionCounter.builder("llm.gateway.deferred.completed", queue, (q) -> q.counts().completed())
					.description("Deferred requests answered in the background")
					.register(meterRegistry);
				FunctionCounter.builder("llm.gateway.deferred.failed", queue, (q) -> q.counts().failed())
					.description("Deferred requests that gave up")
					.register(meterRegistry);
			});
			guard.ifAvailable((callGuard) -> FunctionCounter
				.builder("llm.gateway.guard.trips", callGuard, CallVolumeGuard::trips)
				.description("Times the call-volume guard started refusing upstream calls")
				.register(meterRegistry));
			budget.ifAvailable((budgetGuard) -> FunctionCounter
				.builder("llm.gateway.budget.trips", budgetGuard, BudgetGuard::trips)
				.description("Times the daily budget was spent")
				.register(meterRegistry));
		};
	}

	/**
	 * Per route and endpoint, the calls it was chosen to go first for, tagged with the route's
	 * strategy; the latency estimate of every endpoint of a least-latency route; the calls in flight
	 * and refused under {@code llm.gateway.max-concurrent-calls}.
	 */
	@Bean
	MeterBinder llmBalanceMetrics(ObjectProvider<RouteBalancer> balancer, ObjectProvider<ConcurrencyLimit> limit) {
		return (meterRegistry) -> {
			balancer.ifAvailable((routes) -> routes.report().forEach((route, report) -> {
				for (RouteReport.Member member : report.endpoints()) {
					FunctionCounter.builder("llm.gateway.route.choices", routes, (b) -> b.chosen(route, member.endpoint()))
						.description("Calls for which the route's balancing chose this endpoint to go first")
						.tags(DefaultCallObservationConvention.ROUTE, route, DefaultCallObservationConvention.ENDPOINT, member.endpoint(), "llm.balance",
								report.strategy().balance().value(), "llm.order", report.strategy().order().value())
						.register(meterRegistry);
					if (member.latency() != null) {
						Gauge.builder("llm.endpoint.latency.estimate", routes, (b) -> seconds(b.latency(member.endpoint())))
							.description("Peak-EWMA time to first token that least-latency balancing compares")
							.baseUnit("seconds")
							.tags(DefaultCallObservationConvention.ENDPOINT, member.endpoint())
							.register(meterRegistry);
					}
				}
			}));
			limit.ifAvailable((calls) -> {
				Gauge.builder("llm.gateway.calls.in-flight", calls, ConcurrencyLimit::inFlight)
					.description("Gateway calls in flight under llm.gateway.max-concurrent-calls (0 when it is off)")
					.register(meterRegistry);
				FunctionCounter.builder("llm.gateway.calls.refused", calls, ConcurrencyLimit::refused)
					.description("Gateway calls refused by llm.gateway.max-concurrent-calls")
					.register(meterRegistry);
			});
		};
	}

	private static double seconds(@Nullable Duration duration) {
		return (duration != null) ? duration.toNanos() / 1e9 : Double.NaN;
	}

	@Bean
	MeterBinder llmDegradationMetrics(ObjectProvider<DegradationWatch> degradation) {
		return (meterRegistry) -> degradation.ifAvailable((watch) -> watch.routes().keySet().forEach((route) -> {
			Gauge.builder("llm.gateway.degraded.share", watch, (w) -> share(w.route(route)))
				.description("Share of the route's answers that were degraded (any tier but PRIMARY) over llm.degradation.window")
				.tag(DefaultCallObservationConvention.ROUTE, route)
				.register(meterRegistry);
			Gauge.builder("llm.gateway.degraded.duration", watch, (w) -> w.route(route).onlyDegradedFor().toMillis() / 1000.0)
				.description("How long the route has answered only degraded; 0 once its first endpoint answers")
				.tag(DefaultCallObservationConvention.ROUTE, route)
				.baseUnit("seconds")
				.register(meterRegistry);
		}));
	}

	// No answer in the window is no share at all, not 0 % degraded.
	private static double share(RouteDegradation route) {
		return (route.degradedShare() != null) ? route.degradedShare() : Double.NaN;
	}

	@Bean
	MeterBinder llmProbeMetrics(ObjectProvider<EndpointRegistry> endpoints) {
		return (meterRegistry) -> endpoints.ifAvailable((registry) -> registry.endpoints().forEach((endpoint) -> {
			FunctionCounter.builder("llm.endpoint.probes", endpoint, (probed) -> probed.probes().succeeded())
				.description("Half-open probes the library sent itself (circuit-breaker.probe: synthetic), by outcome")
				.tags(DefaultCallObservationConvention.ENDPOINT, endpoint.name(), "outcome", "success")
				.register(meterRegistry);
			FunctionCounter.builder("llm.endpoint.probes", endpoint, (probed) -> probed.probes().failed())
				.description("Half-open probes the library sent itself (circuit-breaker.probe: synthetic), by outcome")
				.tags(DefaultCallObservationConvention.ENDPOINT, endpoint.name(), "outcome", "failure")
				.register(meterRegistry);
		}));
	}

	@Bean
	MeterBinder llmResilience4jMetrics(ResilienceRegistries registries) {
		return (meterRegistry) -> {
			if (!registries.shared()) {
				TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(registries.circuitBreakers()).bindTo(meterRegistry);
				TaggedRetryMetrics.ofRetryRegistry(registries.retries()).bindTo(meterRegistry);
				TaggedBulkheadMetrics.ofBulkheadRegistry(registries.bulkheads()).bindTo(meterRegistry);
			}
		};
	}

}
