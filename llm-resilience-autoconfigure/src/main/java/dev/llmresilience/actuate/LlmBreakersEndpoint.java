package dev.llmresilience.actuate;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmresilience.endpoint.EndpointRegistry;
import dev.llmresilience.endpoint.EndpointSettings;
import dev.llmresilience.endpoint.LlmEndpoint;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * {@code /actuator/llmbreakers}: the state of every endpoint's circuit breaker and bulkhead, and
 * the routes. Shows no API key and no header value.
 */
@Endpoint(id = "llmbreakers")
public class LlmBreakersEndpoint {

	private final EndpointRegistry endpoints;

	/**
	 * Create the endpoint.
	 * @param endpoints the endpoints to report on
	 */
	public LlmBreakersEndpoint(EndpointRegistry endpoints) {
		this.endpoints = endpoints;
	}

	/**
	 * Every endpoint and route.
	 * @return the report
	 */
	@ReadOperation
	public BreakersDescriptor breakers() {
		Map<String, EndpointDescriptor> descriptors = new LinkedHashMap<>();
		this.endpoints.endpoints().forEach((endpoint) -> descriptors.put(endpoint.name(), describe(endpoint)));
		return new BreakersDescriptor(descriptors, this.endpoints.routeNames());
	}

	/**
	 * One endpoint.
	 * @param name the endpoint's name
	 * @return its descriptor, or {@code null} (a 404) for an unknown name
	 */
	@ReadOperation
	public @Nullable EndpointDescriptor breaker(@Selector String name) {
		LlmEndpoint endpoint = this.endpoints.endpoint(name);
		return (endpoint != null) ? describe(endpoint) : null;
	}

	static EndpointDescriptor describe(LlmEndpoint endpoint) {
		EndpointSettings settings = endpoint.settings();
		CircuitBreaker breaker = endpoint.circuitBreaker();
		CircuitBreaker.Metrics metrics = breaker.getMetrics();
		CircuitBreakerConfig config = breaker.getCircuitBreakerConfig();
		Bulkhead bulkhead = endpoint.bulkhead();
		LlmEndpoint.Transition transition = endpoint.lastTransition();
		return new EndpointDescriptor(settings.model(), settings.region(), settings.priority(), settings.enabled(),
				breaker.getState().name(), metrics.getFailureRate(), metrics.getSlowCallRate(),
				metrics.getNumberOfBufferedCalls(), metrics.getNumberOfFailedCalls(), metrics.getNumberOfSlowCalls(),
				metrics.getNumberOfNotPermittedCalls(),
				new ConfigDescriptor(config.getSlidingWindowSize(), config.getMinimumNumberOfCalls(),
						config.getFailureRateThreshold(), settings.circuitBreaker().waitDurationInOpenState(),
						config.getPermittedNumberOfCallsInHalfOpenState()),
				new BulkheadDescriptor(bulkhead.getBulkheadConfig().getMaxConcurrentCalls(),
						bulkhead.getMetrics().getAvailableConcurrentCalls()),
				(transition != null) ? new TransitionDescriptor(transition.from().name(), transition.to().name(),
						transition.at().toString()) : null);
	}

	/**
	 * The whole report.
	 *
	 * @param endpoints every endpoint by name
	 * @param routes every route's endpoints, in order
	 */
	public record BreakersDescriptor(Map<String, EndpointDescriptor> endpoints, Map<String, List<String>> routes) {
	}

	/**
	 * One endpoint.
	 *
	 * @param model the model
	 * @param region the region label
	 * @param priority the priority
	 * @param enabled whether it takes part in routes
	 * @param state the breaker's state
	 * @param failureRate percent, -1 until the minimum number of calls
	 * @param slowCallRate percent, -1 until the minimum number of calls
	 * @param bufferedCalls calls in the window
	 * @param failedCalls failed calls in the window
	 * @param slowCalls slow calls in the window
	 * @param notPermittedCalls calls refused while open
	 * @param config the breaker's configuration
	 * @param bulkhead the bulkhead
	 * @param lastTransition the most recent state change, or {@code null}
	 */
	public record EndpointDescriptor(String model, @Nullable String region, int priority, boolean enabled,
			String state, float failureRate, float slowCallRate, int bufferedCalls, int failedCalls, int slowCalls,
			long notPermittedCalls, ConfigDescriptor config, BulkheadDescriptor bulkhead,
			@Nullable TransitionDescriptor lastTransition) {
	}

	/**
	 * The breaker's configuration.
	 *
	 * @param slidingWindowSize calls in the window
	 * @param minimumNumberOfCalls calls before the rate is computed
	 * @param failureRateThreshold percent at which it opens
	 * @param waitDurationInOpenState time open before probing, ISO-8601
	 * @param permittedCallsInHalfOpenState probes
	 */
	public record ConfigDescriptor(int slidingWindowSize, int minimumNumberOfCalls, float failureRateThreshold,
			Duration waitDurationInOpenState, int permittedCallsInHalfOpenState) {
	}

	/**
	 * The bulkhead.
	 *
	 * @param maxConcurrentCalls its size
	 * @param availableConcurrentCalls permits free now
	 */
	public record BulkheadDescriptor(int maxConcurrentCalls, int availableConcurrentCalls) {
	}

	/**
	 * A state change.
	 *
	 * @param from the state before
	 * @param to the state after
	 * @param at when, ISO-8601
	 */
	public record TransitionDescriptor(String from, String to, String at) {
	}

}
