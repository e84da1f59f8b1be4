package dev.llmresilience.engine;

import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the gateway's Micrometer meters: the recorder of each call's and attempt's
 * meters ({@link LlmMetrics}), and one {@code MeterBinder} per concern for the meters read from the
 * gateway's state (deferred queue, guards, balancing, degradation, probes, and Resilience4j's own).
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
	DeferredQueueMeters llmDeferredQueueMeters(ObjectProvider<DeferredQueue> queue) {
		return new DeferredQueueMeters(queue);
	}

	@Bean
	GuardMeters llmGuardMeters(ObjectProvider<CallVolumeGuard> callVolume, ObjectProvider<BudgetGuard> budget,
			ObjectProvider<ConcurrencyLimit> limit) {
		return new GuardMeters(callVolume, budget, limit);
	}

	@Bean
	RouteBalanceMeters llmRouteBalanceMeters(ObjectProvider<RouteBalancer> balancer) {
		return new RouteBalanceMeters(balancer);
	}

	@Bean
	DegradationMeters llmDegradationMeters(ObjectProvider<DegradationWatch> watch) {
		return new DegradationMeters(watch);
	}

	@Bean
	ProbeMeters llmProbeMeters(ObjectProvider<EndpointRegistry> endpoints) {
		return new ProbeMeters(endpoints);
	}

	@Bean
	CapacityMeters llmCapacityMeters(ObjectProvider<EndpointRegistry> endpoints) {
		return new CapacityMeters(endpoints);
	}

	@Bean
	Resilience4jMeters llmResilience4jMeters(ResilienceRegistries registries) {
		return new Resilience4jMeters(registries);
	}

}
