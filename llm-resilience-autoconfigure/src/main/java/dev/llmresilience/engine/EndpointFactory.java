package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.function.DoubleSupplier;

import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.LlmClient;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.core.IntervalBiFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.github.resilience4j.retry.RetryRegistry;

/**
 * Creates each endpoint's circuit breaker, retry and bulkhead from its settings, in the given
 * Resilience4j registries, with every decision delegated to the given {@link FailureClassifier}
 * instance (the application's bean, when it declares one): what the breaker records, what is
 * retried and how long a retry waits.
 */
final class EndpointFactory {

	private final CircuitBreakerRegistry circuitBreakers;

	private final RetryRegistry retries;

	private final BulkheadRegistry bulkheads;

	private final FailureClassifier classifier;

	private final Clock clock;

	private final DoubleSupplier random;

	private final CallVolumeGuard guard;

	private double batchShare = BatchShare.DEFAULT_SHARE;

	/**
	 * Create a factory.
	 * @param circuitBreakers registry the breakers are created in
	 * @param retries registry the retries are created in
	 * @param bulkheads registry the bulkheads are created in
	 * @param classifier the classifier
	 * @param clock the breakers' clock (injected so tests can move time)
	 * @param random source of jitter, uniform in [0, 1)
	 */
	public EndpointFactory(CircuitBreakerRegistry circuitBreakers, RetryRegistry retries, BulkheadRegistry bulkheads,
			FailureClassifier classifier, Clock clock, DoubleSupplier random) {
		this(circuitBreakers, retries, bulkheads, classifier, clock, random, CallVolumeGuard.off());
	}

	/**
	 * Create a factory.
	 * @param circuitBreakers registry the breakers are created in
	 * @param retries registry the retries are created in
	 * @param bulkheads registry the bulkheads are created in
	 * @param classifier the classifier
	 * @param clock the breakers' clock (injected so tests can move time)
	 * @param random source of jitter, uniform in [0, 1)
	 * @param guard the call-volume guard the breakers' synthetic probes take permits from
	 */
	public EndpointFactory(CircuitBreakerRegistry circuitBreakers, RetryRegistry retries, BulkheadRegistry bulkheads,
			FailureClassifier classifier, Clock clock, DoubleSupplier random, CallVolumeGuard guard) {
		this.guard = guard;
		this.circuitBreakers = circuitBreakers;
		this.retries = retries;
		this.bulkheads = bulkheads;
		this.classifier = classifier;
		this.clock = clock;
		this.random = random;
	}

	/**
	 * Create an endpoint whose client tells no one what the provider announces: only its configured
	 * rate limits and its 429s are known.
	 * @param settings its settings
	 * @param client its protocol client
	 * @return the endpoint
	 */
	public LlmEndpoint create(EndpointSettings settings, LlmClient client) {
		return create(settings, client, new EndpointCapacity(settings, this.clock));
	}

	/**
	 * Create an endpoint whose client tells its capacity what the provider announces.
	 * @param settings its settings
	 * @param client its protocol client, made with {@code settings.client().withRateLimits(capacity)}
	 * @param capacity what is known of the provider's rate limits
	 * @return the endpoint
	 */
	LlmEndpoint create(EndpointSettings settings, LlmClient client, EndpointCapacity capacity) {
		CircuitBreaker circuitBreaker = circuitBreaker(settings);
		Retry retry = retry(settings);
		Bulkhead bulkhead = this.bulkheads.find(settings.name())
			.orElseGet(() -> this.bulkheads.bulkhead(settings.name(), bulkheadConfig(settings.bulkhead())));
		return new LlmEndpoint(settings, client, circuitBreaker, retry, bulkhead, this.classifier, this.guard, this.clock,
				capacity, new BatchShare(this.batchShare));
	}

	/**
	 * A factory like this one whose endpoints let batch calls use the given share of their capacity.
	 * @param share {@code llm.gateway.batch-share}, in (0, 1]
	 * @return the factory
	 */
	EndpointFactory withBatchShare(double share) {
		EndpointFactory factory = new EndpointFactory(this.circuitBreakers, this.retries, this.bulkheads, this.classifier,
				this.clock, this.random, this.guard);
		factory.batchShare = new BatchShare(share).share();
		return factory;
	}

	/**
	 * The endpoint's breaker. When the registry already holds one by that name (an instance that
	 * Resilience4j's Spring Boot integration created from
	 * {@code resilience4j.circuitbreaker.instances.<name>}), its window, thresholds and waits are
	 * kept, but the failure rules and the clock are ours: which outcomes count is not a tuning knob.
	 */
	private CircuitBreaker circuitBreaker(EndpointSettings settings) {
		CircuitBreaker existing = this.circuitBreakers.find(settings.name()).orElse(null);
		if (existing == null) {
			return this.circuitBreakers.circuitBreaker(settings.name(), circuitBreakerConfig(settings.circuitBreaker()));
		}
		CircuitBreakerConfig.Builder from = CircuitBreakerConfig.from(existing.getCircuitBreakerConfig());
		if (settings.circuitBreaker().probe() == EndpointSettings.Probe.SYNTHETIC) {
			from.automaticTransitionFromOpenToHalfOpenEnabled(true);
		}
		CircuitBreakerConfig tuned = withFailureRules(from);
		CircuitBreaker replacement = CircuitBreaker.of(settings.name(), tuned, existing.getTags());
		this.circuitBreakers.replace(settings.name(), replacement);
		return replacement;
	}

	/**
	 * The endpoint's retry. What is retried and how long to wait follow the failure rules and
	 * {@code llm.*.retry}, so an instance of the same name already in the registry is replaced.
	 */
	private Retry retry(EndpointSettings settings) {
		RetryConfig config = retryConfig(settings.retry());
		if (this.retries.find(settings.name()).isEmpty()) {
			return this.retries.retry(settings.name(), config);
		}
		Retry retry = Retry.of(settings.name(), config);
		this.retries.replace(settings.name(), retry);
		return retry;
	}

	CircuitBreakerConfig circuitBreakerConfig(EndpointSettings.CircuitBreakerSettings settings) {
		return withFailureRules(CircuitBreakerConfig.custom()
			.slidingWindowType(SlidingWindowType.COUNT_BASED)
			.slidingWindowSize(settings.slidingWindowSize())
			.minimumNumberOfCalls(settings.minimumNumberOfCalls())
			.failureRateThreshold(settings.failureRateThreshold())
			.waitDurationInOpenState(settings.waitDurationInOpenState())
			.permittedNumberOfCallsInHalfOpenState(settings.permittedCallsInHalfOpenState())
			.slowCallDurationThreshold(settings.slowCallDurationThreshold())
			.slowCallRateThreshold(settings.slowCallRateThreshold())
			// Synthetic probes: Resilience4j moves the breaker to HALF_OPEN itself when the wait has passed,
			// through the same once-per-open-state guard as a call's permit request. A second mover of
			// its own (a timer calling transitionToHalfOpenState) raced users' calls on a route with no
			// other endpoint: the loser made an unpublished HALF_OPEN -> HALF_OPEN move, and that new
			// half-open never got its probes, so the breaker stayed HALF_OPEN for good.
			.automaticTransitionFromOpenToHalfOpenEnabled(settings.probe() == EndpointSettings.Probe.SYNTHETIC)
			// A refusal is an expected answer and its trace is never logged: do not pay for filling one in
			.writableStackTraceEnabled(false));
	}

	private CircuitBreakerConfig withFailureRules(CircuitBreakerConfig.Builder builder) {
		FailureClassifier rules = this.classifier;
		return builder.recordException(rules::isBreakerFailure)
			.ignoreException((error) -> !rules.isBreakerFailure(error))
			.recordResult((result) -> false)
			.clock(this.clock)
			.build();
	}

	RetryConfig retryConfig(EndpointSettings.RetrySettings settings) {
		FailureClassifier rules = this.classifier;
		IntervalBiFunction<Object> interval = (retryNumber, result) -> {
			Duration retryAfter = result.isLeft() ? AttemptTime.waitAskedFor(rules, result.getLeft()) : null;
			if (retryAfter != null) {
				return retryAfter.toMillis();
			}
			double spread = settings.jitter() * (2 * this.random.getAsDouble() - 1);
			long jittered = Math.round(settings.backoffMillis(retryNumber) * (1 + spread));
			// max-backoff is the longest wait, jitter included (as Reactor's RetryBackoffSpec bounds it)
			return Math.max(1L, Math.min(jittered, settings.maxBackoff().toMillis()));
		};
		return RetryConfig.custom()
			.maxAttempts(settings.maxAttempts())
			.retryOnException((error) -> rules.isRetryable(error, settings.maxRetryAfter()))
			.intervalBiFunction(interval)
			.failAfterMaxAttempts(false)
			.build();
	}

	BulkheadConfig bulkheadConfig(EndpointSettings.BulkheadSettings settings) {
		return BulkheadConfig.custom()
			.maxConcurrentCalls(settings.maxConcurrentCalls())
			.maxWaitDuration(settings.maxWait())
			.writableStackTraceEnabled(false)
			.build();
	}

}
