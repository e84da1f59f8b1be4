package dev.llmresilience.engine;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * One attempt on one endpoint, the same for {@code chat}, {@code stream} and the breaker's own
 * probes: admitted and accounted for by {@link AttemptAccounting}, it takes a call-volume guard
 * permit, sends the request upstream (as a stream when the endpoint can), bounds it with one
 * {@link AttemptWatchdog} and classifies how it ended.
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
 * every call's success path runs through it, at a fraction of their cost (see BENCHMARKS.md).
 */
final class EndpointAttempt extends AttemptAccounting implements CoreSubscriber<Object>, Subscription {

	/** What the attempt's subscriber sees. */
	enum Exposure {

		/** A chat call: the whole answer at its end. */
		CHAT,
		/** A streamed call: the chunks from the first token on. */
		STREAM,
		/** The breaker's own half-open probe: like chat; any normal end of a 2xx answer is a success. */
		PROBE

	}

	private static final AtomicIntegerFieldUpdater<EndpointAttempt> DELIVERED = AtomicIntegerFieldUpdater
		.newUpdater(EndpointAttempt.class, "delivered");

	private static final AtomicLongFieldUpdater<EndpointAttempt> REQUESTED = AtomicLongFieldUpdater
		.newUpdater(EndpointAttempt.class, "requested");

	private final int number;

	private final Answer answer = new Answer();

	private CoreSubscriber<Object> actual = Operators.emptySubscriber();

	private @Nullable AttemptWatchdog<Object> watchdog;

	private volatile boolean started;

	private boolean lostRace;

	private volatile boolean cancelled;

	private boolean unbounded;

	private final @Nullable StreamRelay relay;

	private volatile int delivered;

	private volatile long requested;

	private volatile @Nullable Object last;

	EndpointAttempt(EndpointCall call, int number) {
		super(call);
		this.number = number;
		this.relay = (call.exposure() == Exposure.STREAM) ? new StreamRelay() : null;
	}

	/**
	 * Run the attempt for its subscriber: refused at once (no call made) when the deadline has run
	 * out or a permit is missing, else sent upstream.
	 * @param actual the endpoint call's retry
	 */
	void subscribe(CoreSubscriber<Object> actual) {
		this.actual = actual;
		long now = now();
		Throwable refused = admit(now);
		if (refused != null) {
			Operators.error(actual, refused);
			return;
		}
		AttemptWatchdog<Object> watchdog = this.call.time().watchdog(this, this.scheduler, now, EndpointAttempt::isToken);
		this.watchdog = watchdog;
		upstream(this.call.context()).subscribe(watchdog);
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
			firstToken();
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

	private void firstToken() {
		long now = now();
		this.firstToken = now;
		this.started = true;
		this.endpoint.waiting(this, false);
		this.endpoint.firstTokenTimes().record(now - this.start);
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
			.classifyStreamError(this.settings.name(), error, seen, this.answer.text(), this.answer.finishReason());
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
					.classifyStreamEnd(this.settings.name(), this.started, this.answer.finishReason());
			}
			catch (RuntimeException ex) {
				fail(ex);
				return;
			}
			finish(outcome, null, this.answer.completion());
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
		cancelled(this.lostRace || this.call.context().race().lost());
	}

	private static boolean isToken(Object element) {
		return (element instanceof CompletionDelta delta) ? delta.hasAnswer() : Answer.hasAnswer((Completion) element);
	}

}
