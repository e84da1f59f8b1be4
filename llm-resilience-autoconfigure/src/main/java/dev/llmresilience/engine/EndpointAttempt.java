package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * One attempt on one endpoint, the same for {@code chat}, {@code stream} and the breaker's own
 * probes: admitted by its {@link #STAGES} in order (or refused, no call made), it sends the request
 * upstream, classifies how it ended, and has its stages released in the reverse order exactly once,
 * whatever the end (a success, a failure, an ignored outcome, a cancel, a lost race).
 * <ul>
 * <li>{@link Exposure#STREAM}: nothing reaches the subscriber before the first chunk that carries
 * part of the answer, so a failure before it can be retried unseen; after it, a failure is an
 * interruption. The chunk with the finish reason is held back and merged with the usage chunk that
 * follows it.</li>
 * <li>{@link Exposure#CHAT} and {@link Exposure#PROBE}: the answer is assembled and handed on as one
 * {@link Completion} at its normal end; the caller has seen nothing before, so any failure may be
 * retried.</li>
 * </ul>
 * A stream succeeds only when it ends normally. The breaker sees the time to the first token: a
 * long answer is not a slow provider. One subscriber rather than a chain of Reactor operators:
 * every call's success path runs through it, at a fraction of their cost (see BENCHMARKS.md); what
 * its stages take for it (a permit, an observation, a watchdog) is kept in its fields, so that the
 * stages themselves are shared by every call.
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

	/**
	 * The concerns of an attempt in the order they admit it; its end releases them in the reverse
	 * order, so the call hears of the attempt last, once the breaker has recorded it. A stage that
	 * refuses the attempt releases the ones before it: a full bulkhead gives the breaker's permit back.
	 */
	static final AttemptStage[] STAGES = {
			// the call is told of every attempt, made or refused, as it ends
			AttemptReport.STAGE,
			// no attempt once the call's deadline has run out
			DeadlineCheck.STAGE,
			// a batch call within the endpoint's batch share, before it takes any of the rate limit
			BatchAdmission.STAGE,
			// none into a rate limit known to be spent; a 429 empties the endpoint's capacity
			CapacityCheck.STAGE,
			// a permit of the endpoint's breaker; the end recorded in it
			BreakerAdmission.STAGE,
			// a slot of the endpoint's bulkhead
			BulkheadSlot.STAGE,
			// the attempt's observation, a child of the call's
			AttemptObservation.STAGE,
			// the request sent upstream, bounded by the attempt's watchdog
			UpstreamRequest.STAGE,
			// listed as waiting for its first token, to be released if the breaker opens
			FirstTokenWait.STAGE };

	private static final AtomicIntegerFieldUpdater<EndpointAttempt> ENDED = AtomicIntegerFieldUpdater
		.newUpdater(EndpointAttempt.class, "ended");

	private static final AtomicIntegerFieldUpdater<EndpointAttempt> DELIVERED = AtomicIntegerFieldUpdater
		.newUpdater(EndpointAttempt.class, "delivered");

	private static final AtomicLongFieldUpdater<EndpointAttempt> REQUESTED = AtomicLongFieldUpdater
		.newUpdater(EndpointAttempt.class, "requested");

	private final EndpointCall call;

	private final LlmEndpoint endpoint;

	private final Scheduler scheduler = Schedulers.parallel();

	private final int number;

	private final Answer answer = new Answer();

	private final @Nullable StreamRelay relay;

	private CoreSubscriber<Object> actual = Operators.emptySubscriber();

	// What the stages took for this attempt: its breaker permit, its observation, its watchdog.
	@Nullable CircuitBreakerPermit permit;

	Observation observation = Observation.NOOP;

	@Nullable AttemptWatchdog<Object> watchdog;

	long reservedTokens;

	boolean batchCounted;

	// Whether FirstTokenWait has listed it as waiting (set before it is listed): an attempt never
	// listed is not looked up in its endpoint's list at its end
	volatile boolean listedWaiting;

	private long start;

	private volatile long firstToken = -1;

	private volatile int ended;

	// How it ended, for the stages that record it.
	private @Nullable Outcome outcome;

	private @Nullable Throwable error;

	private volatile boolean started;

	private boolean lostRace;

	private volatile boolean cancelled;

	private boolean unbounded;

	private volatile int delivered;

	private volatile long requested;

	private volatile @Nullable Object last;

	EndpointAttempt(EndpointCall call, int number) {
		this.call = call;
		this.endpoint = call.endpoint();
		this.number = number;
		this.relay = (call.exposure() == Exposure.STREAM) ? new StreamRelay() : null;
	}

	/**
	 * Run the attempt for its subscriber: each stage admits it in turn, the request going upstream
	 * once the permits are taken; refused at once (no call made) by the first stage that refuses.
	 * @param actual the endpoint call's retry
	 */
	void subscribe(CoreSubscriber<Object> actual) {
		this.actual = actual;
		long now = now();
		this.start = now;
		for (int i = 0; i < STAGES.length; i++) {
			Throwable refused = STAGES[i].admit(this, now);
			if (refused != null) {
				refuse(i, refused, now);
				return;
			}
			if (this.ended != 0) {
				// ended as it was sent: a stage admitted now would never be released
				return;
			}
		}
	}

	private void refuse(int stage, Throwable refused, long now) {
		ENDED.set(this, 1);
		this.outcome = FailureClassifier.outcomeOf(refused);
		this.error = refused;
		releaseStages(stage, AttemptStage.End.REFUSED, now);
		Operators.error(this.actual, refused);
	}

	// The stages before the given one, in the reverse order of their admission.
	private void releaseStages(int stages, AttemptStage.End end, long now) {
		for (int i = stages - 1; i >= 0; i--) {
			STAGES[i].release(this, end, now);
		}
	}

	/**
	 * Account for an attempt that ended, once.
	 * @param outcome how it ended
	 * @param error its classified error, or {@code null} for a normal end
	 */
	private void finish(Outcome outcome, @Nullable Throwable error) {
		if (ENDED.compareAndSet(this, 0, 1)) {
			this.outcome = outcome;
			this.error = error;
			releaseStages(STAGES.length, AttemptStage.End.FINISHED, now());
		}
	}

	// Abandon the attempt if it is still waiting for its first token: true if it was released.
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
			onFirstToken();
			if (this.lostRace) {
				return;
			}
		}
		StreamRelay relay = this.relay;
		if (relay != null) {
			CompletionDelta next = relay.next((delta != null) ? delta : CompletionDelta.of((Completion) element));
			if (next == null) {
				requestOne();
			}
			else {
				if (!this.unbounded) {
					REQUESTED.decrementAndGet(this);
				}
				this.actual.onNext(next);
			}
		}
	}

	private void onFirstToken() {
		long now = now();
		this.firstToken = now;
		this.started = true;
		// no longer waiting for it: what FirstTokenWait listed ends here (started is written before
		// listedWaiting is read, and FirstTokenWait reads started after it listed it: one of the two
		// takes it off the list)
		if (this.listedWaiting) {
			this.endpoint.waiting(this, false);
		}
		this.endpoint.firstTokenTimes().record(now - this.start);
		this.endpoint.promptSizeTimes().record(this.call.context().promptSize(), now - this.start);
		this.endpoint.hang().firstToken(now);
		this.lostRace = !this.call.context().race().firstToken();
	}

	// a chunk not handed on is asked for again
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
		Throwable classified = this.endpoint.failures()
			.classifyStreamError(name(), error, seen, this.answer.text(), this.answer.finishReason());
		if (classified == null) {
			onComplete();
			return;
		}
		fail(this.call.time().withinDeadline(classified, this.number, now()));
	}

	@Override
	public void onComplete() {
		if (this.lostRace || this.cancelled) {
			return;
		}
		StreamRelay relay = this.relay;
		if (relay != null) {
			Outcome outcome;
			try {
				outcome = this.endpoint.failures()
					.classifyStreamEnd(name(), this.started, this.answer.finishReason());
			}
			catch (RuntimeException ex) {
				fail(ex);
				return;
			}
			finish(outcome, null);
			CompletionDelta last = relay.last(this.answer.usage(), this.answer.model());
			if (last == null) {
				this.actual.onComplete();
			}
			else {
				deliver(last);
			}
			return;
		}
		LlmUpstreamException failure = this.endpoint.failures()
			.classifyCompletion(name(), true, this.answer.text(), this.answer.hasToolCalls(),
					this.answer.finishReason());
		if (failure != null && !(this.call.exposure() == Exposure.PROBE && failure.outcome() == Outcome.EMPTY_RESPONSE)) {
			fail(failure);
			return;
		}
		// recorded before the answer travels on: a caller that takes it and lets go still leaves a success
		finish(Outcome.SUCCESS, null);
		deliver(this.answer.chatCompletion());
	}

	private void fail(Throwable error) {
		Throwable failure = withinBudget(error);
		finish(FailureClassifier.outcomeOf(failure), failure);
		this.actual.onError(failure);
	}

	// A retry the endpoint's budget cannot pay for is not made: the failure goes to the next endpoint.
	private Throwable withinBudget(Throwable error) {
		if (this.call.exposure() == Exposure.PROBE || !(error instanceof LlmUpstreamException upstream)
				|| this.number >= this.endpoint.settings().retry().maxAttempts()
				|| !this.endpoint.classifier().isRetryable(error, this.endpoint.settings().retry().maxRetryAfter())) {
			return error;
		}
		if (this.endpoint.retryBudget().tryRetry(now())) {
			return error;
		}
		this.endpoint.retryRefused();
		return upstream.withoutRetry(RetryBudget.SPENT);
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
		if (ENDED.compareAndSet(this, 0, 1)) {
			boolean lost = this.lostRace || this.call.context().race().lost();
			releaseStages(STAGES.length, lost ? AttemptStage.End.LOST : AttemptStage.End.CANCELLED, now());
		}
	}

	static boolean isToken(Object element) {
		return (element instanceof CompletionDelta delta) ? delta.hasAnswer() : Answer.hasAnswer((Completion) element);
	}

	EndpointCall call() {
		return this.call;
	}

	LlmEndpoint endpoint() {
		return this.endpoint;
	}

	String name() {
		return this.endpoint.name();
	}

	Scheduler scheduler() {
		return this.scheduler;
	}

	Answer answer() {
		return this.answer;
	}

	/**
	 * When the attempt was admitted.
	 * @return the scheduler's time
	 */
	long start() {
		return this.start;
	}

	/**
	 * When its first token came.
	 * @return the scheduler's time, or -1 before it
	 */
	long firstToken() {
		return this.firstToken;
	}

	boolean started() {
		return this.started;
	}

	boolean ended() {
		return this.ended != 0;
	}

	/**
	 * How a refused or finished attempt ended.
	 * @return the outcome
	 */
	Outcome outcome() {
		Outcome outcome = this.outcome;
		if (outcome == null) {
			throw new IllegalStateException("The attempt has not ended");
		}
		return outcome;
	}

	/**
	 * The error a refused or finished attempt ended with.
	 * @return the classified error, or {@code null} for a normal end
	 */
	@Nullable Throwable error() {
		return this.error;
	}

	private long now() {
		return this.scheduler.now(TimeUnit.NANOSECONDS);
	}

}
