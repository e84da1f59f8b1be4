package dev.llmresilience.engine;

import io.github.resilience4j.micrometer.tagged.TaggedBulkheadMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedRetryMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Binds Resilience4j's own meters ({@code resilience4j.circuitbreaker.*}, {@code .retry.*},
 * {@code .bulkhead.*}) for our breakers, retries and bulkheads when they live in registries of our
 * own; the application's Resilience4j integration publishes those of its registries itself.
 */
final class Resilience4jMeters implements MeterBinder {

	private final ResilienceRegistries registries;

	Resilience4jMeters(ResilienceRegistries registries) {
		this.registries = registries;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		if (!this.registries.shared()) {
			TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(this.registries.circuitBreakers()).bindTo(registry);
			TaggedRetryMetrics.ofRetryRegistry(this.registries.retries()).bindTo(registry);
			TaggedBulkheadMetrics.ofBulkheadRegistry(this.registries.bulkheads()).bindTo(registry);
		}
	}

}
