package dev.llmresilience.engine;

import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.protocol.UpstreamFailures;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent;
import io.github.resilience4j.retry.Retry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One configured model endpoint with its own circuit breaker, retry and bulkhead. Every call, chat
 * or stream, is a series of {@link EndpointAttempt}s under the endpoint's Resilience4j retry: each
 * attempt passes the breaker, then the bulkhead, and is bounded by its first token, its idle time,
 * its timeout and the call's deadline, so every attempt is recorded by the breaker, a retry never
 * starts while the breaker is open, and a timeout is a failure the breaker counts. When the breaker
 * opens, the attempts still waiting for their first token are released to the route's next endpoint;
 * its {@link HangDetector} opens it when its own first-token times say it hangs; with
 * {@code probe: synthetic} the endpoint sends its half-open probes itself.
 */
public final class LlmEndpoint {

	/** The observation of one upstream attempt (named as OpenTelemetry's GenAI client span). */
	public static final String ATTEMPT_OBSERVATION = AttemptObservation.NAME;

	private final EndpointSettings settings;

	private final LlmClient client;

	private final CircuitBreaker circuitBreaker;

	private final Retry retry;

	private final Bulkhead bulkhead;

	private final FailureClassifier classifier;

	private final UpstreamFailures failures;

	private final Set<EndpointAttempt> waiting = ConcurrentHashMap.newKeySet();

	private final @Nullable SyntheticProbes probes;

	private final boolean streamsUpstream;

	private final boolean clientStreams;

	private final FirstTokenTimes firstTokenTimes = new FirstTokenTimes();

	private final PromptSizeTimes promptSizeTimes = new PromptSizeTimes();

	private final EndpointCapacity capacity;

	private final RetryBudget retryBudget;

	private final BatchShare batchShare;

	private final LongAdder routedAway = new LongAdder();

	private final LongAdder retriesRefused = new LongAdder();

	private final HangDetector hang;

	private final StartOrder startOrder;

	/**
	 * Create an endpoint whose probes, if its settings say the library sends them, pass no guard.
	 * @param settings its settings
	 * @param client its protocol client
	 * @param circuitBreaker its breaker
	 * @param retry its retry
	 * @param bulkhead its bulkhead
	 * @param classifier the classifier
	 */
	public LlmEndpoint(EndpointSettings settings, LlmClient client, CircuitBreaker circuitBreaker, Retry retry,
			Bulkhead bulkhead, FailureClassifier classifier) {
		this(settings, client, circuitBreaker, retry, bulkhead, classifier, CallVolumeGuard.off(), Clock.systemUTC());
	}

	/**
	 * Create an endpoint.
	 * @param settings its settings
	 * @param client its protocol client
	 * @param circuitBreaker its breaker
	 * @param retry its retry
	 * @param bulkhead its bulkhead
	 * @param classifier the classifier
	 * @param guard the call-volume guard its synthetic probes take permits from
	 * @param clock the clock that stamps probes
	 */
	public LlmEndpoint(EndpointSettings settings, LlmClient client, CircuitBreaker circuitBreaker, Retry retry,
			Bulkhead bulkhead, FailureClassifier classifier, CallVolumeGuard guard, Clock clock) {
		this(settings, client, circuitBreaker, retry, bulkhead, classifier, guard, clock,
				new EndpointCapacity(settings, clock), new BatchShare(BatchShare.DEFAULT_SHARE));
	}

	// The capacity comes from outside when the client was made to tell it what the provider announces.
	LlmEndpoint(EndpointSettings settings, LlmClient client, CircuitBreaker circuitBreaker, Retry retry,
			Bulkhead bulkhead, FailureClassifier classifier, CallVolumeGuard guard, Clock clock,
			EndpointCapacity capacity, BatchShare batchShare) {
		this.capacity = capacity;
		capacity.inFlight(() -> bulkhead.getBulkheadConfig().getMaxConcurrentCalls()
				- bulkhead.getMetrics().getAvailableConcurrentCalls());
		this.batchShare = batchShare;
		this.retryBudget = new RetryBudget(settings.retry());
		this.settings = settings;
		this.client = client;
		this.circuitBreaker = circuitBreaker;
		this.retry = retry;
		this.bulkhead = bulkhead;
		this.classifier = classifier;
		this.failures = new UpstreamFailures(clock);
		this.streamsUpstream = settings.timeouts().upstreamStreaming() && client.supportsStreaming();
		this.clientStreams = client.supportsStreaming();
		this.startOrder = new StartOrder(circuitBreaker, settings.circuitBreaker().startOrderWait().toNanos());
		circuitBreaker.getEventPublisher().onStateTransition(this::transitioned);
		this.hang = new HangDetector(this, clock);
		this.probes = probesItself() ? new SyntheticProbes(this, guard, clock) : null;
	}

	/**
	 * Ask the endpoint for a whole answer: sent upstream as a stream when it can, so that
	 * {@code first-token-timeout} bounds it too; since the caller sees nothing until the answer is
	 * whole, any failure may be retried.
	 * @param request the request
	 * @param context what the gateway call shares
	 * @return the completion, or the last attempt's classified error
	 */
	public Mono<Completion> chat(ChatRequest request, CallContext context) {
		return EndpointCall.chat(this, request, EndpointAttempt.Exposure.CHAT, context);
	}

	/**
	 * Ask the endpoint for a whole answer, outside a gateway call.
	 * @param request the request
	 * @param onAttempt receives every attempt, made or refused, as it ends (not when cancelled)
	 * @return the completion, or the last attempt's classified error
	 */
	public Mono<Completion> chat(ChatRequest request, Consumer<Attempt> onAttempt) {
		return chat(request, CallContext.of(onAttempt));
	}

	/**
	 * Stream an answer. Only failures before the first content chunk are retried (see
	 * {@link UpstreamFailures#classifyStreamError}), so the subscriber sees the chunks of one attempt
	 * only; the stream's {@code timeout} does not apply, so a long answer is never cut.
	 * @param request the request
	 * @param context what the gateway call shares
	 * @return the chunks from the first one with content on (the last one carries the finish reason
	 * and usage), or the classified error; an
	 * {@link dev.llmresilience.failure.LlmStreamInterruptedException} after the first chunk
	 */
	public Flux<CompletionDelta> stream(ChatRequest request, CallContext context) {
		return EndpointCall.stream(this, request, context);
	}

	/**
	 * Stream an answer outside a gateway call.
	 * @param request the request
	 * @param onAttempt receives every attempt, made or refused, as it ends (not when cancelled)
	 * @return the chunks, or the classified error
	 */
	public Flux<CompletionDelta> stream(ChatRequest request, Consumer<Attempt> onAttempt) {
		return stream(request, CallContext.of(onAttempt));
	}

	/**
	 * Stream an answer outside a gateway call, each attempt taking a permit of the call-volume guard.
	 * @param request the request
	 * @param onAttempt receives every attempt, made or refused, as it ends (not when cancelled)
	 * @param guard the call-volume guard
	 * @return the chunks, or the classified error
	 */
	public Flux<CompletionDelta> stream(ChatRequest request, Consumer<Attempt> onAttempt, CallVolumeGuard guard) {
		return stream(request, CallContext.of(onAttempt, guard));
	}

	// One probe attempt: not retried, let through the half-open state that users' calls may not pass.
	Mono<Completion> probe(ChatRequest request, CallContext context) {
		return EndpointCall.chat(this, request, EndpointAttempt.Exposure.PROBE, context);
	}

	static LlmUpstreamException guardTripped(String endpoint) {
		return new LlmUpstreamException(endpoint, Outcome.GUARD_TRIPPED, 0, null,
				"llm.gateway.guard.max-calls-per-hour is reached: no upstream call until the window renews", null);
	}

	// An attempt waits for its first token between these two calls: released when the breaker opens.
	void waiting(EndpointAttempt attempt, boolean waits) {
		if (waits) {
			this.waiting.add(attempt);
			this.hang.waiting(attempt.scheduler());
		}
		else {
			this.waiting.remove(attempt);
		}
	}

	// The attempts waiting for their first token now, for the hang detector to read.
	Set<EndpointAttempt> waitingForFirstToken() {
		return this.waiting;
	}

	HangDetector hang() {
		return this.hang;
	}

	// puts the closed breaker's outcomes in the order their attempts started
	StartOrder startOrder() {
		return this.startOrder;
	}

	/**
	 * Whether a user's call would be let through now: its breaker closed (or disabled, or half-open
	 * with users' calls as the probes) and a bulkhead slot free.
	 * @return true if a call would be attempted
	 */
	public boolean admitsCalls() {
		return breakerAdmitsCalls() && this.bulkhead.getMetrics().getAvailableConcurrentCalls() > 0;
	}

	// its breaker closed, disabled, or half-open with users' calls as the probes
	boolean breakerAdmitsCalls() {
		return switch (this.circuitBreaker.getState()) {
			case CLOSED, DISABLED, METRICS_ONLY -> true;
			case HALF_OPEN -> !probesItself();
			default -> false;
		};
	}

	// chat goes upstream as a stream when upstream-streaming allows it; a stream whenever the client can
	boolean streamsUpstream(EndpointAttempt.Exposure exposure) {
		return (exposure == EndpointAttempt.Exposure.STREAM) ? this.clientStreams : this.streamsUpstream;
	}

	// No more synthetic probes: the registry is closing this endpoint's client.
	void stopProbes() {
		if (this.probes != null) {
			this.probes.stop();
		}
	}

	boolean probesItself() {
		return this.settings.circuitBreaker().probe() == EndpointSettings.Probe.SYNTHETIC;
	}

	private void transitioned(CircuitBreakerOnStateTransitionEvent event) {
		if (event.getStateTransition().getFromState() == CircuitBreaker.State.CLOSED) {
			this.startOrder.windowEnded();
		}
		CircuitBreaker.State to = event.getStateTransition().getToState();
		if (to == CircuitBreaker.State.OPEN || to == CircuitBreaker.State.FORCED_OPEN) {
			// released on another thread: the fallback they go on to must not run inside this transition
			for (EndpointAttempt attempt : this.waiting) {
				Schedulers.parallel().schedule(attempt::release);
			}
		}
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

	LlmClient client() {
		return this.client;
	}

	FailureClassifier classifier() {
		return this.classifier;
	}

	UpstreamFailures failures() {
		return this.failures;
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
	 * How long this endpoint's recent attempts waited for their first token.
	 * @return the first-token times
	 */
	public FirstTokenTimes firstTokenTimes() {
		return this.firstTokenTimes;
	}

	/**
	 * How long this endpoint's recent attempts waited for their first token, by prompt size.
	 * @return the first-token times of each prompt-size bucket
	 */
	PromptSizeTimes promptSizeTimes() {
		return this.promptSizeTimes;
	}

	/**
	 * What is known of the provider's rate limits.
	 * @return the endpoint's capacity
	 */
	EndpointCapacity capacity() {
		return this.capacity;
	}

	/**
	 * How much of the endpoint batch calls may use.
	 * @return the endpoint's batch share
	 */
	BatchShare batchShare() {
		return this.batchShare;
	}

	RetryBudget retryBudget() {
		return this.retryBudget;
	}

	void routedAway() {
		this.routedAway.increment();
	}

	long routedAwayCount() {
		return this.routedAway.sum();
	}

	void retryRefused() {
		this.retriesRefused.increment();
	}

	long retriesRefused() {
		return this.retriesRefused.sum();
	}

	/**
	 * The half-open probes the breaker has had.
	 * @return the probes so far
	 */
	public ProbeStats probes() {
		return (this.probes != null) ? this.probes.stats() : ProbeStats.requests();
	}

	@Override
	public String toString() {
		return "LlmEndpoint[" + this.settings.name() + "]";
	}

}
