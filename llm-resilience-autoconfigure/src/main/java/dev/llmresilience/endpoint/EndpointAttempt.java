package dev.llmresilience.endpoint;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

import dev.llmresilience.chat.Attempt;
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
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

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
 * {@link Completion} at its normal end; the caller has seen nothing before, so any failure may be
 * retried.</li>
 * </ul>
 * A stream is a success only when it ends normally, a failure when it breaks, stalls or ends
 * truncated, and nothing at all when the caller cancels it (but a slow call when it lost a hedged
 * request's race). The duration the breaker sees, for its slow-call rate, is the time to the first
 * token: a long answer is not a slow provider.
 * <p>
 * It is one subscriber between the watchdog and the endpoint's retry rather than a chain of
 * Reactor operators: the success path of every call runs through it, and one object per attempt
 * costs a fraction of the dozen operators it replaces (see BENCHMARKS.md).
 */
final class EndpointAttempt implements CoreSubscriber<Object>, Subscription {

	/** What the attempt's subscriber sees. */
	enum Exposure {

		/** A chat call: the whole answer at its end. */
		CHAT,

		/** A streamed call: the chunks from the first token on. */
		STREAM,

		/** The breaker's own half-open probe: like chat; any normal end of a 2xx answer is a success. */
		PROBE

	}

	private static final AtomicIntegerFieldUpdater<EndpointAttempt> ENDED = AtomicIntegerFieldUpdater
		.newUpdater(EndpointAttempt.class, "ended");

	private static final AtomicIntegerFieldUpdater<EndpointAttempt> DELIVERED = AtomicIntegerFieldUpdater
		.newUpdater(EndpointAttempt.class, "delivered");

	private static final AtomicLongFieldUpdater<EndpointAttempt> REQUESTED = AtomicLongFieldUpdater
		.newUpdater(EndpointAttempt.class, "requested");

	private final EndpointCall call;

	private final LlmEndpoint endpoint;

	private final EndpointSettings settings;

	private final int number;

	private final Scheduler scheduler = Schedulers.parallel();

	private final Answer answer = new Answer();

	private CoreSubscriber<Object> actual = Operators.emptySubscriber();

	private @Nullable AttemptWatchdog<Object> watchdog;

	private @Nullable CircuitBreakerPermit permit;

	private Observation observation = Observation.NOOP;

	private long start;

	private volatile long firstToken = -1;

	private volatile boolean started;

	private boolean lostRace;

	private volatile boolean cancelled;

	private boolean emitting;

	private boolean unbounded;

	private @Nullable StringBuilder leading;

	private @Nullable CompletionDelta held;

	private volatile int ended;

	private volatile int delivered;

	private volatile long requested;

	private volatile @Nullable Object last;

	EndpointAttempt(EndpointCall call, int number) {
		this.call = call;
		this.endpoint = call.endpoint();
		this.settings = this.endpoint.settings();
		this.number = number;
	}

	/**
	 * Run the attempt for its subscriber: refused at once (no call made) when the deadline has run
	 * out or a permit is missing, else sent upstream.
	 * @param actual the endpoint call's retry
	 */
	void subscribe(CoreSubscriber<Object> actual) {
		this.actual = actual;
		CallContext context = this.call.context();
		long now = now();
		if (now >= context.deadlineNanos()) {
			refuse(Outcome.DEADLINE_EXCEEDED, this.call.limits()
				.upstream(Outcome.DEADLINE_EXCEEDED, "The call's deadline ran out before this attempt could start"));
			return;
		}
		boolean user = this.call.exposure() != Exposure.PROBE;
		CircuitBreaker breaker = this.endpoint.circuitBreaker();
		if (user && this.endpoint.probesItself() && breaker.getState() == CircuitBreaker.State.HALF_OPEN) {
			refuse(Outcome.BREAKER_OPEN, notPermitted());
			return;
		}
		CircuitBreakerPermit permit = CircuitBreakerPermit.tryAcquire(breaker);
		if (permit == null) {
			refuse(Outcome.BREAKER_OPEN, notPermitted());
			return;
		}
		if (user && this.endpoint.probesItself() && permit.fromCurrentHalfOpenState()) {
			// this call's permit request ended the open state's wait: the probes are the library's
			permit.release();
			refuse(Outcome.BREAKER_OPEN, notPermitted());
			return;
		}
		if (!this.endpoint.bulkhead().tryAcquirePermission()) {
			permit.release();
			refuse(Outcome.BULKHEAD_FULL, BulkheadFullException.createBulkheadFullException(this.endpoint.bulkhead()));
			return;
		}
		this.permit = permit;
		this.start = now;
		this.observation = AttemptObservation.start(context.parent(), this.settings, "chat");
		AttemptWatchdog<Object> watchdog = this.call.limits().watchdog(this, this.scheduler, now, EndpointAttempt::isToken);
		this.watchdog = watchdog;
		upstream(context).subscribe(watchdog);
		if (!this.started && this.ended == 0) {
			// still waiting for its first token once the request is on its way: released if the breaker opens
			this.endpoint.waiting(this, true);
			if (this.started || this.ended != 0) {
				this.endpoint.waiting(this, false);
			}
		}
	}

	private Publisher<?> upstream(CallContext context) {
		if (!context.guard().tryAcquire()) {
			return Flux.error(LlmEndpoint.guardTripped(this.settings.name()));
		}
		try {
			return this.call.streaming() ? this.endpoint.client().stream(this.call.request())
					: this.endpoint.client().chat(this.call.request());
		}
		catch (RuntimeException ex) {
			return Flux.error(ex);
		}
	}

	/**
	 * Abandon the attempt if it is still waiting for its first token.
	 * @return true if it was released
	 */
	boolean release() {
		AttemptWatchdog<Object> watchdog = this.watchdog;
		return watchdog != null && watchdog.release();
	}

	@Override
	public Context currentContext() {
		return this.actual.currentContext();
	}

	@Override
	public void onSubscribe(Subscription subscription) {
		this.actual.onSubscribe(this);
	}

	@Override
	public void onNext(Object element) {
		if (this.lostRace || this.cancelled) {
			return;
		}
		CompletionDelta delta = null;
		boolean token;
		if (element instanceof Completion completion) {
			this.answer.add(completion);
			token = Answer.hasAnswer(completion);
		}
		else {
			delta = (CompletionDelta) element;
			this.answer.add(delta);
			token = delta.hasAnswer();
		}
		if (!this.started && token) {
			firstToken();
			if (this.lostRace) {
				return;
			}
		}
		if (this.call.exposure() == Exposure.STREAM) {
			relay((delta != null) ? delta : Answer.deltaOf((Completion) element));
		}
	}

	private void firstToken() {
		long now = now();
		this.firstToken = now;
		this.started = true;
		this.endpoint.waiting(this, false);
		this.endpoint.firstTokenTimes().record(now - this.start);
		this.lostRace = !this.call.context().race().firstToken();
	}

	// Nothing before the first token; the first one carries the whitespace before it; the chunk with
	// the finish reason waits for the usage that may follow. A chunk not passed on is asked for again.
	private void relay(CompletionDelta delta) {
		CompletionDelta next = delta;
		if (!this.emitting) {
			if (!delta.hasAnswer()) {
				StringBuilder leading = (this.leading != null) ? this.leading : (this.leading = new StringBuilder());
				leading.append(delta.content());
				requestOne();
				return;
			}
			this.emitting = true;
			if (this.leading != null && !this.leading.isEmpty()) {
				next = delta.withContent(this.leading + delta.content());
			}
		}
		if (next.finishReason() != null) {
			this.held = next;
			requestOne();
		}
		else if (!next.content().isEmpty() || !next.toolCalls().isEmpty()) {
			if (!this.unbounded) {
				REQUESTED.decrementAndGet(this);
			}
			this.actual.onNext((next.usage() != null) ? next.withUsage(null) : next);
		}
		else {
			requestOne();
		}
	}

	private void requestOne() {
		AttemptWatchdog<Object> watchdog = this.watchdog;
		if (!this.unbounded && watchdog != null) {
			watchdog.request(1);
		}
	}

	@Override
	public void onError(Throwable error) {
		if (this.lostRace || this.cancelled) {
			return;
		}
		boolean seen = this.call.exposure() == Exposure.STREAM && this.started;
		Throwable classified = this.endpoint.classifier()
			.classifyStreamError(this.settings.name(), error, seen, this.answer.text(), this.answer.finishReason());
		if (classified == null) {
			onComplete();
			return;
		}
		fail(this.call.limits().withinDeadline(classified, this.number, now()));
	}

	@Override
	public void onComplete() {
		if (this.lostRace || this.cancelled) {
			return;
		}
		if (this.call.exposure() == Exposure.STREAM) {
			Outcome outcome;
			try {
				outcome = this.endpoint.classifier()
					.classifyStreamEnd(this.settings.name(), this.started, this.answer.finishReason());
			}
			catch (RuntimeException ex) {
				fail(ex);
				return;
			}
			CompletionDelta held = this.held;
			Completion completion = this.answer.completion();
			finish(outcome, null, completion);
			if (held == null && this.answer.usage() == null) {
				this.actual.onComplete();
				return;
			}
			deliver((held != null) ? held.withUsage(this.answer.usage())
					: new CompletionDelta("", List.of(), null, this.answer.usage(), this.answer.model()));
			return;
		}
		LlmUpstreamException failure = this.endpoint.classifier()
			.classifyCompletion(this.settings.name(), true, this.answer.text(), this.answer.hasToolCalls(),
					this.answer.finishReason());
		if (failure != null && !(this.call.exposure() == Exposure.PROBE && failure.outcome() == Outcome.EMPTY_RESPONSE)) {
			fail(failure);
			return;
		}
		// recorded before the answer travels on: a caller that takes it and lets go still leaves a success
		finish(Outcome.SUCCESS, null, this.answer.completion());
		deliver(this.answer.chatCompletion());
	}

	private void fail(Throwable error) {
		finish(FailureClassifier.outcomeOf(error), error, null);
		this.actual.onError(error);
	}

	// The answer's last element needs demand: it waits for a request when none is left.
	private void deliver(Object element) {
		this.last = element;
		tryDeliver();
	}

	private void tryDeliver() {
		Object element = this.last;
		if (element != null && this.requested > 0 && DELIVERED.compareAndSet(this, 0, 1)) {
			this.actual.onNext(element);
			this.actual.onComplete();
		}
	}

	@Override
	public void request(long n) {
		if (!Operators.validate(n)) {
			return;
		}
		if (n == Long.MAX_VALUE) {
			this.unbounded = true;
		}
		Operators.addCap(REQUESTED, this, n);
		AttemptWatchdog<Object> watchdog = this.watchdog;
		if (watchdog != null) {
			// chat hands on one answer at the end: everything upstream is read as it comes
			watchdog.request((this.call.exposure() == Exposure.STREAM) ? n : Long.MAX_VALUE);
		}
		tryDeliver();
	}

	@Override
	public void cancel() {
		this.cancelled = true;
		AttemptWatchdog<Object> watchdog = this.watchdog;
		if (watchdog != null) {
			// the cancel reaches the upstream call before the permits are free: the call has stopped
			watchdog.cancel();
		}
		if (!ENDED.compareAndSet(this, 0, 1)) {
			return;
		}
		this.endpoint.waiting(this, false);
		CircuitBreakerPermit permit = this.permit;
		if (this.lostRace || this.call.context().race().lost()) {
			lost(permit);
			return;
		}
		if (permit != null) {
			permit.release();
		}
		this.endpoint.bulkhead().onComplete();
		AttemptObservation.cancelled(this.observation, this.settings.model());
	}

	// The other side of a hedged request won: a slow call for the breaker, whatever its real length.
	private void lost(@Nullable CircuitBreakerPermit permit) {
		long elapsed = now() - this.start;
		if (permit != null) {
			long slow = this.endpoint.circuitBreaker().getCircuitBreakerConfig().getSlowCallDurationThreshold().toNanos();
			permit.succeeded(Math.max(elapsed, slow + 1));
		}
		this.endpoint.bulkhead().onComplete();
		AttemptObservation.stop(this.observation, Outcome.HEDGE_LOST, null, this.settings.model());
		this.call.context().onAttempt().accept(new Attempt(this.settings.name(), Outcome.HEDGE_LOST,
				Duration.ofNanos(elapsed)), null);
	}

	private void finish(Outcome outcome, @Nullable Throwable error, @Nullable Completion completion) {
		if (!ENDED.compareAndSet(this, 0, 1)) {
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
		CallContext context = this.call.context();
		context.onAttempt().accept(new Attempt(this.settings.name(), outcome, Duration.ofNanos(end - this.start)),
				(error == null) ? completion : null);
		if (error instanceof LlmUpstreamException upstream && AttemptLimits.NO_TIME_LEFT.equals(upstream.noRetry())) {
			// the retry the deadline could not fit, refused as the attempt it would have been
			context.onAttempt().accept(new Attempt(this.settings.name(), Outcome.DEADLINE_EXCEEDED, Duration.ZERO), null);
		}
	}

	private void refuse(Outcome outcome, Throwable error) {
		this.call.context().onAttempt().accept(new Attempt(this.settings.name(), outcome, Duration.ZERO), null);
		Operators.error(this.actual, error);
	}

	private CallNotPermittedException notPermitted() {
		return CallNotPermittedException.createCallNotPermittedException(this.endpoint.circuitBreaker());
	}

	private long now() {
		return this.scheduler.now(TimeUnit.NANOSECONDS);
	}

	private static boolean isToken(Object element) {
		return (element instanceof CompletionDelta delta) ? delta.hasAnswer() : Answer.hasAnswer((Completion) element);
	}

}
