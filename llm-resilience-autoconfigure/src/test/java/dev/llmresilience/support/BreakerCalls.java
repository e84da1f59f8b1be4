package dev.llmresilience.support;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;

import org.springframework.context.ApplicationContext;

/**
 * The calls an endpoint's circuit breaker holds in its window.
 *
 * @param buffered calls in the window
 * @param failed of which failures
 * @param successful of which successes
 */
public record BreakerCalls(int buffered, int failed, int successful) {

	/** Nothing recorded. */
	public static final BreakerCalls NONE = new BreakerCalls(0, 0, 0);

	public static BreakerCalls of(ApplicationContext context, String endpoint) {
		return of(FakeUpstream.endpoint(context, endpoint).circuitBreaker());
	}

	public static BreakerCalls of(CircuitBreaker breaker) {
		CircuitBreaker.Metrics metrics = breaker.getMetrics();
		return new BreakerCalls(metrics.getNumberOfBufferedCalls(), metrics.getNumberOfFailedCalls(),
				metrics.getNumberOfSuccessfulCalls());
	}

	public static BreakerCalls failures(int count) {
		return new BreakerCalls(count, count, 0);
	}

	public static BreakerCalls successes(int count) {
		return new BreakerCalls(count, 0, count);
	}

}
