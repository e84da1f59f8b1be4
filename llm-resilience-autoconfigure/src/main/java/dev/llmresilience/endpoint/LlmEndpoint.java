package dev.llmresilience.endpoint;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.llmresilience.failure.Attempt;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.Outcome;
import dev.llmresilience.gateway.ChatRequest;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.reactor.bulkhead.operator.BulkheadOperator;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.reactor.retry.RetryOperator;
import io.github.resilience4j.retry.Retry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One configured model endpoint with its own circuit breaker, retry and bulkhead. Each call goes
 * through retry, then circuit breaker, then bulkhead, then the per-attempt timeout, then the HTTP
 * call, so that every attempt is recorded by the breaker, a retry never starts while the breaker is
 * open, and a timeout is a failure the breaker counts.
 */
public final class LlmEndpoint {

	private final EndpointSettings settings;

	private final LlmClient client;

	private final CircuitBreaker circuitBreaker;

	private final Retry retry;

	private final Bulkhead bulkhead;

	private final FailureClassifier classifier;

	private final AtomicReference<@Nullable Transition> lastTransition = new AtomicReference<>();

	/**
	 * Create an endpoint.
	 * @param settings its settings
	 * @param client its protocol client
	 * @param circuitBreaker its breaker
	 * @param retry its retry
	 * @param bulkhead its bulkhead
	 * @param classifier the classifier
	 */
	public LlmEndpoint(EndpointSettings settings, LlmClient client, CircuitBreaker circuitBreaker, Retry retry,
			Bulkhead bulkhead, FailureClassifier classifier) {
		this.settings = settings;
		this.client = client;
		this.circuitBreaker = circuitBreaker;
		this.retry = retry;
		this.bulkhead = bulkhead;
		this.classifier = classifier;
		circuitBreaker.getEventPublisher()
			.onStateTransition((event) -> this.lastTransition.set(new Transition(event.getStateTransition().getFromState(),
					event.getStateTransition().getToState(), event.getCreationTime().toInstant())));
	}

	/**
	 * Call the endpoint, retrying as its settings say.
	 * @param request the request
	 * @param onAttempt receives every attempt, made or refused, as it ends (not when cancelled)
	 * @return the completion, or the last attempt's classified error
	 */
	public Mono<Completion> call(ChatRequest request, Consumer<Attempt> onAttempt) {
		Duration timeout = (request.timeout() != null) ? request.timeout() : this.settings.timeout();
		Mono<Completion> attempt = Mono.defer(() -> {
			long start = now();
			return this.client.chat(request)
				.timeout(timeout)
				.onErrorMap((error) -> this.classifier.classifyError(this.settings.name(), error))
				.transformDeferred(BulkheadOperator.of(this.bulkhead))
				.transformDeferred(CircuitBreakerOperator.of(this.circuitBreaker))
				.doOnSuccess((completion) -> onAttempt.accept(attempt(Outcome.SUCCESS, start)))
				.doOnError((error) -> onAttempt.accept(attempt(FailureClassifier.outcomeOf(error), start)));
		});
		return attempt.transformDeferred(RetryOperator.of(this.retry));
	}

	/**
	 * Stream an answer from the endpoint. Each attempt passes the breaker and the bulkhead (held until
	 * the stream ends) and is bounded by {@code first-token-timeout} until its first content chunk and
	 * by {@code stream-idle-timeout} between chunks after it; {@code timeout} does not apply, so a long
	 * answer is never cut. Only failures before the first content chunk are retried (they are the only
	 * retryable ones, see {@link FailureClassifier#classifyStreamError}), so the subscriber sees the
	 * chunks of one attempt only.
	 * @param request the request
	 * @param onAttempt receives every attempt, made or refused, as it ends (not when cancelled)
	 * @return the chunks from the first one with content on (the last one carries the finish reason
	 * and usage), or the classified error; an
	 * {@link dev.llmresilience.failure.LlmStreamInterruptedException} after the first chunk
	 */
	public Flux<CompletionDelta> stream(ChatRequest request, Consumer<Attempt> onAttempt) {
		return Flux.defer(() -> new StreamAttempt(this.settings, this.client, this.circuitBreaker, this.bulkhead,
				this.classifier, request, onAttempt).run())
			.transformDeferred(RetryOperator.of(this.retry));
	}

	private Attempt attempt(Outcome outcome, long start) {
		return new Attempt(this.settings.name(), outcome, Duration.ofNanos(now() - start));
	}

	private static long now() {
		return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
	}

	/**
	 * The endpoint's name.
	 * @return the name
	 */
	public String name() {
		return this.settings.name();
	}

	/**
	 * The endpoint's settings.
	 * @return the settings
	 */
	public EndpointSettings settings() {
		return this.settings;
	}

	/**
	 * The endpoint's circuit breaker.
	 * @return the breaker
	 */
	public CircuitBreaker circuitBreaker() {
		return this.circuitBreaker;
	}

	/**
	 * The endpoint's retry.
	 * @return the retry
	 */
	public Retry retry() {
		return this.retry;
	}

	/**
	 * The endpoint's bulkhead.
	 * @return the bulkhead
	 */
	public Bulkhead bulkhead() {
		return this.bulkhead;
	}

	/**
	 * The breaker's most recent state transition.
	 * @return the transition, or {@code null} if it never changed state
	 */
	public @Nullable Transition lastTransition() {
		return this.lastTransition.get();
	}

	@Override
	public String toString() {
		return "LlmEndpoint[" + this.settings.name() + "]";
	}

	/**
	 * A state transition of the breaker.
	 *
	 * @param from the state before
	 * @param to the state after
	 * @param at when it happened
	 */
	public record Transition(CircuitBreaker.State from, CircuitBreaker.State to, Instant at) {
	}

}
