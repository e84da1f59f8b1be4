package dev.llmresilience.engine;

import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;

/**
 * The Resilience4j registries the endpoints' breakers, retries and bulkheads live in: the
 * application's (from Resilience4j's Spring Boot integration) where it has them, else our own.
 *
 * @param circuitBreakers the breakers' registry
 * @param retries the retries' registry
 * @param bulkheads the bulkheads' registry
 * @param shared whether the registries are the application's, whose own integration then publishes
 * their metrics and lists them at {@code /actuator/circuitbreakers}
 */
record ResilienceRegistries(CircuitBreakerRegistry circuitBreakers, RetryRegistry retries,
		BulkheadRegistry bulkheads, boolean shared) {

	/**
	 * New registries of our own.
	 * @return the registries
	 */
	public static ResilienceRegistries own() {
		return new ResilienceRegistries(CircuitBreakerRegistry.ofDefaults(), RetryRegistry.ofDefaults(),
				BulkheadRegistry.ofDefaults(), false);
	}

}
