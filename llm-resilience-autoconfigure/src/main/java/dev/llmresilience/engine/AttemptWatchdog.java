package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongFieldUpdater;
import java.util.function.Function;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * Bounds one attempt in time with a single timer: until its first token by the earlier of
 * {@code first-token-timeout}, the attempt's {@code timeout} and the call's deadline; after it by
 * {@code stream-idle-timeout} between chunks, the attempt's {@code timeout} (chat) and the deadline
 * that bounds a whole stream. Reactor's {@code timeout} operator would arm a new timer for every
 * chunk; this one sleeps until the earliest bound and, when it wakes, either expires the attempt or
 * sleeps again until the next one, so a steady stream wakes it once per idle period at most. The
 * timer is one of the scheduler's {@link AttemptTimers}, which arm the scheduler only for a timer due
 * before every other: calls answered before their bound leave the scheduler's thread asleep. It can
 * also be released from outside (the endpoint's breaker opened while the attempt waited for its
 * first token). Expiry cancels the upstream call and signals the error the attempt maps it to.
 * Once tokens flow, a silence while the caller has asked for nothing more is the caller's, not the
 * provider's: the idle bound then waits, and starts again when the caller asks (a slow reader is not
 * a stalled provider, and never counts against its breaker); the call's deadline still ends it.
 *
 * @param <T> the chunk type
 */
final class AttemptWatchdog<T> implements CoreSubscriber<T>, Subscription {

	/** What ended an attempt from outside its upstream. */
	enum Expiry {

		/** No first token within {@code first-token-timeout}. */
		FIRST_TOKEN,

		/** No chunk for {@code stream-idle-timeout} once tokens flowed. */
		IDLE,

		/** No complete answer within the attempt's {@code timeout}. */
		ATTEMPT,

		/** The call's deadline ran out before any of the endpoint's own bounds. */
		DEADLINE,

		/** Released before its first token: the endpoint's breaker opened. */
		RELEASED

	}

	/**
	 * The bounds of one attempt, on the scheduler's clock in nanoseconds, {@link Long#MAX_VALUE} for
	 * none.
	 *
	 * @param firstTokenBy when the first token must have come
	 * @param idleNanos the longest silence between chunks once tokens flow (a length, not a time)
	 * @param attemptBy when the whole attempt must have ended
	 * @param deadlineBeforeToken the call's deadline until the first token
	 * @param deadlineAfterToken the call's deadline once tokens flow
	 */
	record Bounds(long firstTokenBy, long idleNanos, long attemptBy, long deadlineBeforeToken,
			long deadlineAfterToken) {

		/** No bound at all: the attempt ends only by itself, or when released. */
		static final Bounds NONE = new Bounds(Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE, Long.MAX_VALUE,
				Long.MAX_VALUE);

	}

	private final CoreSubscriber<? super T> actual;

	private final Scheduler scheduler;

	private final AttemptTimers timers;

	// the attempt's Bounds, one field each

	private final long firstTokenBy;

	private final long idleNanos;

	private final long attemptBy;

	private final long deadlineBeforeToken;

	private final long deadlineAfterToken;

	private final Predicate<? super T> isToken;

	private final Function<Expiry, Throwable> errors;

	private Subscription upstream = Operators.emptySubscription();

	private volatile boolean token;

	private volatile long lastActivity;

	/** Chunks asked for and not yet delivered ({@link Long#MAX_VALUE}: unbounded). */
	private volatile long demand;

	private static final AtomicLongFieldUpdater<AttemptWatchdog> DEMAND = AtomicLongFieldUpdater
		.newUpdater(AttemptWatchdog.class, "demand");

	private volatile @Nullable Disposable timer;

	private boolean done;

	private boolean subscribed;

	private @Nullable Expiry early;

	private boolean cancelledEarly;

	/**
	 * Create a watchdog for one attempt.
	 * @param actual the attempt's subscriber
	 * @param scheduler the scheduler whose clock the bounds are on, and that the timer runs on
	 * @param bounds the attempt's bounds
	 * @param isToken whether a chunk carries part of the answer
	 * @param errors the error each expiry stands for
	 */
	AttemptWatchdog(CoreSubscriber<? super T> actual, Scheduler scheduler, Bounds bounds, Predicate<? super T> isToken,
			Function<Expiry, Throwable> errors) {
		this.actual = actual;
		this.scheduler = scheduler;
		this.timers = AttemptTimers.on(scheduler);
		// copied, not kept: the record is built only to be passed here, so the JIT need not allocate it
		this.firstTokenBy = bounds.firstTokenBy();
		this.idleNanos = bounds.idleNanos();
		this.attemptBy = bounds.attemptBy();
		this.deadlineBeforeToken = bounds.deadlineBeforeToken();
		this.deadlineAfterToken = bounds.deadlineAfterToken();
		this.isToken = isToken;
		this.errors = errors;
	}

	@Override
	public Context currentContext() {
		return this.actual.currentContext();
	}

	@Override
	public void onSubscribe(Subscription subscription) {
		synchronized (this) {
			this.upstream = subscription;
			this.subscribed = true;
		}
		this.lastActivity = now();
		this.actual.onSubscribe(this);
		Expiry early;
		boolean cancelledEarly;
		synchronized (this) {
			early = this.early;
			cancelledEarly = this.cancelledEarly;
		}
		if (cancelledEarly) {
			subscription.cancel();
			return;
		}
		if (early != null) {
			// released before the upstream call had subscribed: stop it now that it has
			subscription.cancel();
			synchronized (this) {
				this.actual.onError(this.errors.apply(early));
			}
			return;
		}
		sleepUntil(next());
	}

	@Override
	public synchronized void onNext(T chunk) {
		if (this.done) {
			Operators.onDiscard(chunk, currentContext());
			return;
		}
		this.lastActivity = now();
		Operators.produced(DEMAND, this, 1);
		if (!this.token && this.isToken.test(chunk)) {
			this.token = true;
		}
		this.actual.onNext(chunk);
	}

	@Override
	public synchronized void onError(Throwable error) {
		if (!this.done) {
			this.done = true;
			stopTimer();
			this.actual.onError(error);
		}
	}

	@Override
	public synchronized void onComplete() {
		if (!this.done) {
			this.done = true;
			stopTimer();
			this.actual.onComplete();
		}
	}

	@Override
	public void request(long n) {
		if (n > 0 && Operators.addCap(DEMAND, this, n) == 0) {
			// the caller asks again after having asked for nothing: the provider's silence starts now
			this.lastActivity = now();
		}
		this.upstream.request(n);
	}

	@Override
	public void cancel() {
		synchronized (this) {
			boolean ended = this.done;
			// a cancelled attempt is not released later: nothing waits on it any more
			this.done = true;
			if (!this.subscribed) {
				this.cancelledEarly = true;
				return;
			}
			if (ended) {
				// an expiry (a release included) or the upstream's own end has stopped it already: the
				// upstream call is cancelled once
				return;
			}
		}
		stopTimer();
		this.upstream.cancel();
	}

	/**
	 * End the attempt now if it is still waiting for its first token.
	 * @return true if it was released
	 */
	boolean release() {
		synchronized (this) {
			if (this.token || this.done) {
				return false;
			}
		}
		return expire(Expiry.RELEASED);
	}

	private void wake() {
		long now = now();
		if (this.token && this.demand == 0) {
			// nothing asked for: the silence is the caller's
			this.lastActivity = now;
		}
		Expiry expiry = expiryAt(now);
		if (expiry != null) {
			expire(expiry);
		}
		else {
			sleepUntil(next());
		}
	}

	private @Nullable Expiry expiryAt(long now) {
		if (!this.token) {
			long own = Math.min(this.firstTokenBy, this.attemptBy);
			if (this.deadlineBeforeToken < own) {
				return (now >= this.deadlineBeforeToken) ? Expiry.DEADLINE : null;
			}
			if (now >= own) {
				return (this.firstTokenBy <= this.attemptBy) ? Expiry.FIRST_TOKEN : Expiry.ATTEMPT;
			}
			return null;
		}
		long idleBy = plus(this.lastActivity, this.idleNanos);
		long own = Math.min(idleBy, this.attemptBy);
		if (this.deadlineAfterToken < own) {
			return (now >= this.deadlineAfterToken) ? Expiry.DEADLINE : null;
		}
		if (now >= own) {
			return (idleBy <= this.attemptBy) ? Expiry.IDLE : Expiry.ATTEMPT;
		}
		return null;
	}

	private long next() {
		if (!this.token) {
			return Math.min(Math.min(this.firstTokenBy, this.attemptBy), this.deadlineBeforeToken);
		}
		return Math.min(Math.min(plus(this.lastActivity, this.idleNanos), this.attemptBy), this.deadlineAfterToken);
	}

	private boolean expire(Expiry expiry) {
		synchronized (this) {
			if (this.done) {
				return false;
			}
			this.done = true;
			if (!this.subscribed) {
				this.early = expiry;
				return true;
			}
		}
		stopTimer();
		this.upstream.cancel();
		synchronized (this) {
			this.actual.onError(this.errors.apply(expiry));
		}
		return true;
	}

	private void sleepUntil(long at) {
		if (at == Long.MAX_VALUE) {
			return;
		}
		synchronized (this) {
			if (this.done) {
				return;
			}
			this.timer = this.timers.schedule(this::wake, at);
		}
	}

	private void stopTimer() {
		Disposable timer = this.timer;
		if (timer != null) {
			timer.dispose();
		}
	}

	/** The timers this attempt's timer is one of. */
	AttemptTimers timers() {
		return this.timers;
	}

	private long now() {
		return this.scheduler.now(TimeUnit.NANOSECONDS);
	}

	private static long plus(long at, long nanos) {
		long sum = at + nanos;
		return (((at ^ sum) & (nanos ^ sum)) < 0) ? Long.MAX_VALUE : sum;
	}

}
