package dev.llmresilience.endpoint;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.publisher.SignalType;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One attempt on one endpoint, the same for {@code chat}, {@code stream} and the breaker's own
 * probes: it takes the breaker's and the bulkhead's permits, a call-volume guard permit, sends the
 * request upstream (as a stream when the endpoint can), bounds it with one {@link AttemptWatchdog},
 * classifies how it ended, records it in the breaker and gives both permits back exactly once.
 * <ul>
 * <li>{@link Exposure#STREAM}: nothing reaches the subscriber before the first chunk that carries
 * part of the answer, so a failure before it can be retried unseen; after it, a failure is an
 * interruption. The chunk with the finish reason is held back and merged with the usage chunk that
 * follows it.</li>
 * <li>{@link Exposure#CHAT} and {@link Exposure#PROBE}: the answer is assembled and handed on as one
 * chunk at its normal end; the caller has seen nothing before, so any failure may be retried.</li>
 * </ul>
 * A stream is a success only when it ends normally, a failure when it breaks, stalls or ends
 * truncated, and nothing at all when the caller cancels it. The duration the breaker sees, for its
 * slow-call rate, is the time to the first token: a long answer is not a slow provider.
 */
final class EndpointAttempt {

	/** What the attempt's subscriber sees. */
	enum Exposure {

		/** A chat call: the whole answer at its end. */
		CHAT,

		/** A streamed call: the chunks from the first token on. */
		STREAM,

		/** The breaker's own half-open probe: like chat; any normal end of a 2xx answer is a success. */
		PROBE

	}

	private final LlmEndpoint endpoint;

	private final EndpointSettings settings;

	private final ChatRequest request;

	private final Exposure exposure;

	private final CallContext context;

	private final Scheduler scheduler = Schedulers.parallel();

	private final AtomicBoolean ended = new AtomicBoolean();

	private final Answer answer = new Answer();

	private final StreamRelay relay = new StreamRelay();

	private @Nullable CircuitBreakerPermit permit;

	private @Nullable AttemptWatchdog<CompletionDelta> watchdog;

	private Observation observation = Observation.NOOP;

	private final boolean streaming;

	private final AttemptTime time;

	private long start;

	private volatile long firstToken = -1;

	private volatile boolean started;

	private Outcome outcome = Outcome.SUCCESS;

	EndpointAttempt(LlmEndpoint endpoint, ChatRequest request, Exposure exposure, CallContext context, int number) {
		this.endpoint = endpoint;
		this.settings = endpoint.settings();
		this.request = request;
		this.exposure = exposure;
		this.context = context;
		this.streaming = endpoint.streamsUpstream(exposure);
		this.time = new AttemptTime(this.settings, request, exposure, context, this.streaming, number);
	}

	Flux<CompletionDelta> run() {
		long now = now();
		if (now >= this.context.deadlineNanos()) {
			return refuse(Outcome.DEADLINE_EXCEEDED, upstream(Outcome.DEADLINE_EXCEEDED,
					"The call's deadline ran out before this attempt could start"));
		}
		boolean user = this.exposure != Exposure.PROBE;
		if (user && this.endpoint.probesItself() && this.endpoint.circuitBreaker().getState() == CircuitBreaker.State.HALF_OPEN) {
			return refuse(Outcome.BREAKER_OPEN, notPermitted());
		}
		this.permit = CircuitBreakerPermit.tryAcquire(this.endpoint.circuitBreaker());
		if (this.permit == null) {
			return refuse(Outcome.BREAKER_OPEN, notPermitted());
		}
		if (user && this.endpoint.probesItself() && this.permit.fromCurrentHalfOpenState()) {
			// this call's permit request ended the open state's wait: the probes are the library's
			this.permit.release();
			return refuse(Outcome.BREAKER_OPEN, notPermitted());
		}
		if (!this.endpoint.bulkhead().tryAcquirePermission()) {
			this.permit.release();
			return refuse(Outcome.BULKHEAD_FULL, BulkheadFullException.createBulkheadFullException(this.endpoint.bulkhead()));
		}
		this.start = now;
		this.observation = AttemptObservation.start(this.context.parent(), this.settings, "chat");
		Flux<CompletionDelta> upstream = Flux.defer(() -> {
			if (!this.context.guard().tryAcquire()) {
				return Flux.error(LlmEndpoint.guardTripped(this.settings.name()));
			}
			return this.streaming ? this.endpoint.client().stream(this.request)
					: this.endpoint.client().chat(this.request).map(CompletionDelta::of).flux();
		});
		AttemptWatchdog.Bounds bounds = this.time.bounds(now);
		return upstream
			.transform(Operators.<CompletionDelta, CompletionDelta>lift((scannable, actual) -> watch(actual, bounds)))
			.doOnNext(this::track)
			.<CompletionDelta>handle((delta, sink) -> {
				if (this.exposure == Exposure.STREAM) {
					this.relay.relay(delta, sink);
				}
			})
			.onErrorResume(this::classify)
			.concatWith(Flux.defer(this::end))
			.doOnComplete(() -> finish(this.outcome, null))
			.doOnError((error) -> finish(FailureClassifier.outcomeOf(error), error))
			// after the cancel has reached the upstream call: the call has stopped before its permits are free
			.doFinally((signal) -> {
				if (signal == SignalType.CANCEL) {
					cancel();
				}
			});
	}

	/**
	 * Abandon the attempt if it is still waiting for its first token.
	 * @return true if it was released
	 */
	boolean release() {
		AttemptWatchdog<CompletionDelta> watchdog = this.watchdog;
		return watchdog != null && watchdog.release();
	}

	private AttemptWatchdog<CompletionDelta> watch(CoreSubscriber<? super CompletionDelta> actual,
			AttemptWatchdog.Bounds bounds) {
		AttemptWatchdog<CompletionDelta> watchdog = new AttemptWatchdog<>(actual, this.scheduler, bounds,
				CompletionDelta::hasAnswer, this.time::expired);
		this.watchdog = watchdog;
		this.endpoint.waiting(this, true);
		return watchdog;
	}

	private void track(CompletionDelta delta) {
		if (!this.started && delta.hasAnswer()) {
			this.firstToken = now();
			this.started = true;
			this.endpoint.waiting(this, false);
		}
		this.answer.add(delta);
	}

	private Flux<CompletionDelta> classify(Throwable error) {
		boolean seen = this.exposure == Exposure.STREAM && this.started;
		Throwable classified = this.endpoint.classifier()
			.classifyStreamError(this.settings.name(), error, seen, this.answer.text(), this.answer.finishReason());
		if (classified == null) {
			return Flux.empty();
		}
		return Flux.error(this.time.withinDeadline(classified, now()));
	}

	private Flux<CompletionDelta> end() {
		if (this.exposure == Exposure.STREAM) {
			this.outcome = this.endpoint.classifier()
				.classifyStreamEnd(this.settings.name(), this.started, this.answer.finishReason());
			finish(this.outcome, null);
			CompletionDelta last = this.relay.last(this.answer.usage(), this.answer.model());
			return (last != null) ? Flux.just(last) : Flux.empty();
		}
		LlmUpstreamException failure = this.endpoint.classifier()
			.classifyCompletion(this.settings.name(), true, this.answer.text(), this.answer.hasToolCalls(),
					this.answer.finishReason());
		if (failure != null && !(this.exposure == Exposure.PROBE && failure.outcome() == Outcome.EMPTY_RESPONSE)) {
			return Flux.error(failure);
		}
		// recorded before the answer travels on: a caller that takes it and lets go still leaves a success
		finish(Outcome.SUCCESS, null);
		return Flux.just(this.answer.asDelta());
	}

	private void finish(Outcome outcome, @Nullable Throwable error) {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		this.endpoint.waiting(this, false);
		long firstToken = this.firstToken;
		long end = now();
		long measured = ((firstToken >= 0) ? firstToken : end) - this.start;
		CircuitBreakerPermit permit = this.permit;
		if (permit != null) {
			if (outcome == Outcome.DEADLINE_EXCEEDED || outcome == Outcome.RELEASED) {
				// abandoned by the call, not ended by the provider: nothing to record
				permit.release();
			}
			else if (error != null) {
				permit.failed(measured, error);
			}
			else if (outcome == Outcome.SUCCESS) {
				permit.succeeded(measured);
			}
			else {
				// a normal end that is neither a success nor a failure (a filtered answer): ignored
				permit.release();
			}
		}
		this.endpoint.bulkhead().onComplete();
		AttemptObservation.stop(this.observation, outcome, error, this.settings.model());
		Completion completion = (error == null) ? this.answer.completion() : null;
		this.context.onAttempt().accept(new Attempt(this.settings.name(), outcome, Duration.ofNanos(end - this.start)),
				completion);
		if (error instanceof LlmUpstreamException upstream && AttemptTime.NO_TIME_LEFT.equals(upstream.noRetry())) {
			// the retry the deadline could not fit, refused as the attempt it would have been
			this.context.onAttempt().accept(new Attempt(this.settings.name(), Outcome.DEADLINE_EXCEEDED, Duration.ZERO),
					null);
		}
	}

	private void cancel() {
		if (this.ended.compareAndSet(false, true)) {
			this.endpoint.waiting(this, false);
			if (this.permit != null) {
				this.permit.release();
			}
			this.endpoint.bulkhead().onComplete();
			AttemptObservation.cancelled(this.observation, this.settings.model());
		}
	}

	private Flux<CompletionDelta> refuse(Outcome outcome, Throwable error) {
		this.context.onAttempt().accept(new Attempt(this.settings.name(), outcome, Duration.ZERO), null);
		return Flux.error(error);
	}

	private CallNotPermittedException notPermitted() {
		return CallNotPermittedException.createCallNotPermittedException(this.endpoint.circuitBreaker());
	}

	private LlmUpstreamException upstream(Outcome outcome, String message) {
		return new LlmUpstreamException(this.settings.name(), outcome, 0, null, message, null);
	}

	private long now() {
		return this.scheduler.now(TimeUnit.NANOSECONDS);
	}

}
