package dev.llmresilience.endpoint;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.guard.CallVolumeGuard;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.reactor.bulkhead.operator.BulkheadOperator;
import io.github.resilience4j.reactor.retry.RetryOperator;
import io.github.resilience4j.retry.Retry;
import io.micrometer.observation.Observation;
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

	/** The observation of one upstream attempt (named as OpenTelemetry's GenAI client span). */
	public static final String ATTEMPT_OBSERVATION = "gen_ai.client.operation";

	private final EndpointSettings settings;

	private final LlmClient client;

	private final CircuitBreaker circuitBreaker;

	private final Retry retry;

	private final Bulkhead bulkhead;

	private final FailureClassifier classifier;

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
	}

	/**
	 * Call the endpoint, retrying as its settings say.
	 * @param request the request
	 * @param onAttempt receives every attempt, made or refused, as it ends (not when cancelled)
	 * @return the completion, or the last attempt's classified error
	 */
	public Mono<Completion> call(ChatRequest request, Consumer<Attempt> onAttempt) {
		return call(request, CallContext.of(onAttempt));
	}

	/**
	 * Call the endpoint, retrying as its settings say, within a gateway call: one observation per
	 * attempt, a permit of the call-volume guard per upstream attempt, and no retry (nor first
	 * attempt, if another attempt of the call came before) that the remaining deadline cannot fit.
	 * @param request the request
	 * @param context what the gateway call shares
	 * @return the completion, or the last attempt's classified error
	 */
	public Mono<Completion> call(ChatRequest request, CallContext context) {
		Duration timeout = (request.timeout() != null) ? request.timeout() : this.settings.timeout();
		BiConsumer<Attempt, @Nullable Completion> onAttempt = context.onAttempt();
		Mono<Completion> attempt = Mono.defer(() -> {
			long start = now();
			if (context.started().get() > 0 && context.deadlineNanos() - start < timeout.toNanos()) {
				onAttempt.accept(attempt(Outcome.DEADLINE_EXCEEDED, start), null);
				return Mono.error(new LlmUpstreamException(name(), Outcome.DEADLINE_EXCEEDED, 0, null,
						"The call's deadline leaves less than the endpoint's timeout of " + timeout
								+ " for another attempt", null));
			}
			context.started().incrementAndGet();
			Observation observation = startObservation(context.parent());
			AtomicBoolean ended = new AtomicBoolean();
			return Mono.defer(() -> context.guard().tryAcquire() ? this.client.chat(request) : Mono.error(guardTripped(name())))
				.timeout(timeout)
				.onErrorMap((error) -> this.classifier.classifyError(this.settings.name(), error))
				.transformDeferred(BulkheadOperator.of(this.bulkhead))
				.transformDeferred((permitted) -> CircuitBreakerPermit.run(this.circuitBreaker, permitted))
				.doOnSuccess((completion) -> {
					ended.set(true);
					endObservation(observation, Outcome.SUCCESS, null,
							(completion != null && completion.model() != null) ? completion.model() : this.settings.model());
					onAttempt.accept(attempt(Outcome.SUCCESS, start), completion);
				})
				.doOnError((error) -> {
					ended.set(true);
					Outcome outcome = FailureClassifier.outcomeOf(error);
					endObservation(observation, outcome, error, this.settings.model());
					onAttempt.accept(attempt(outcome, start), null);
				})
				.doOnCancel(() -> {
					if (ended.compareAndSet(false, true)) {
						observation.lowCardinalityKeyValue("llm.outcome", "CANCELLED");
						observation.lowCardinalityKeyValue("error.type", "cancelled");
						observation.lowCardinalityKeyValue("gen_ai.response.model", this.settings.model());
						observation.stop();
					}
				});
		});
		return attempt.transformDeferred(RetryOperator.of(this.retry));
	}

	static LlmUpstreamException guardTripped(String endpoint) {
		return new LlmUpstreamException(endpoint, Outcome.GUARD_TRIPPED, 0, null,
				"llm.gateway.guard.max-calls-per-hour is reached: no upstream call until the window renews", null);
	}

	private Observation startObservation(@Nullable Observation parent) {
		if (parent == null || parent.isNoop()) {
			return Observation.NOOP;
		}
		return Observation.createNotStarted(ATTEMPT_OBSERVATION, parent.getObservationRegistry())
			.parentObservation(parent)
			.contextualName("chat " + this.settings.model())
			.lowCardinalityKeyValue("gen_ai.operation.name", "chat")
			.lowCardinalityKeyValue("gen_ai.provider.name", this.settings.providerName())
			.lowCardinalityKeyValue("gen_ai.request.model", this.settings.model())
			.lowCardinalityKeyValue("llm.endpoint", name())
			.start();
	}

	private static void endObservation(Observation observation, Outcome outcome, @Nullable Throwable error,
			String responseModel) {
		observation.lowCardinalityKeyValue("llm.outcome", outcome.name());
		observation.lowCardinalityKeyValue("error.type", (error != null) ? outcome.name() : "none");
		observation.lowCardinalityKeyValue("gen_ai.response.model", responseModel);
		if (error != null) {
			observation.error(error);
		}
		observation.stop();
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
		return stream(request, onAttempt, CallVolumeGuard.off());
	}

	/**
	 * Stream an answer from the endpoint, each attempt taking a permit of the call-volume guard
	 * right before its HTTP call; see {@link #stream(ChatRequest, Consumer)}.
	 * @param request the request
	 * @param onAttempt receives every attempt, made or refused, as it ends (not when cancelled)
	 * @param guard the call-volume guard
	 * @return the chunks, or the classified error
	 */
	public Flux<CompletionDelta> stream(ChatRequest request, Consumer<Attempt> onAttempt, CallVolumeGuard guard) {
		return Flux.defer(() -> new StreamAttempt(this.settings, this.client, this.circuitBreaker, this.bulkhead,
				this.classifier, request, onAttempt, guard).run())
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

	@Override
	public String toString() {
		return "LlmEndpoint[" + this.settings.name() + "]";
	}

}
