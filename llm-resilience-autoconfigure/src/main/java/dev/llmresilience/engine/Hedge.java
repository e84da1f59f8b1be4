package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.LlmGatewayListener.HedgeOutcome;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * One hedged request: the same call on two endpoints of a route, the second sent only when the
 * first has brought no token within the hedge delay, its endpoint would take the call and the
 * route's hedge budget allows. The first side to bring a token wins and the other is cancelled as
 * the loser (its attempt then shows {@code HEDGE_LOST}, and its breaker records a slow call).
 * Nothing of a side reaches the subscriber before it has won, so a streamed answer never mixes
 * two endpoints. When a side fails before either won, the other is waited for (a failure the
 * gateway would not fall back on ends both); when both fail, the last failure is the hedge's.
 *
 * @param <T> what each side hands on: a completion, or a stream's chunks
 */
final class Hedge<T> implements Subscription {

	private static final int NONE = -1;

	private static final AtomicIntegerFieldUpdater<Hedge> WINNER = AtomicIntegerFieldUpdater.newUpdater(Hedge.class,
			"winner");

	private final Function<CallContext.Race, Publisher<? extends T>> firstCall;

	private final Function<CallContext.Race, Publisher<? extends T>> second;

	private final long delayNanos;

	private final BooleanSupplier secondAdmits;

	private final HedgePolicy policy;

	private final Consumer<HedgeOutcome> outcomes;

	private final Side first = new Side(0);

	private final Side other = new Side(1);

	private CoreSubscriber<? super T> actual = Operators.emptySubscriber();

	private volatile int winner = NONE;

	private volatile boolean hedged;

	private volatile boolean cancelled;

	private volatile @Nullable Disposable timer;

	private boolean terminated;

	private long requested;

	// first and second: the calls on the endpoint tried first and on the next one, each in the race
	// it is given; outcomes: told how the hedge ended, when one was sent or refused
	Hedge(Function<CallContext.Race, Publisher<? extends T>> first, Function<CallContext.Race, Publisher<? extends T>> second,
			long delayNanos, BooleanSupplier secondAdmits, HedgePolicy policy, Consumer<HedgeOutcome> outcomes) {
		this.firstCall = first;
		this.second = second;
		this.delayNanos = delayNanos;
		this.secondAdmits = secondAdmits;
		this.policy = policy;
		this.outcomes = outcomes;
	}

	void start(CoreSubscriber<? super T> actual) {
		this.actual = actual;
		actual.onSubscribe(this);
		this.first.start(this.firstCall);
		if (this.winner == NONE && !this.first.done && !this.cancelled) {
			this.timer = Schedulers.parallel().schedule(this::delayPassed, this.delayNanos, TimeUnit.NANOSECONDS);
		}
	}

	// whether the request was sent to the second endpoint too
	boolean hedged() {
		return this.hedged;
	}

	// 0 for the endpoint tried first, 1 for the hedge, -1 while none has won
	int winner() {
		return this.winner;
	}

	private void delayPassed() {
		synchronized (this) {
			if (this.cancelled || this.terminated || this.winner != NONE || this.first.done
					|| !this.secondAdmits.getAsBoolean()) {
				return;
			}
			if (this.policy.tryHedge()) {
				this.hedged = true;
			}
		}
		if (this.hedged) {
			this.other.start(this.second);
		}
		else {
			this.outcomes.accept(HedgeOutcome.REFUSED);
		}
	}

	private boolean won(Side side) {
		if (!WINNER.compareAndSet(this, NONE, side.index)) {
			return this.winner == side.index;
		}
		stopTimer();
		Side loser = (side == this.first) ? this.other : this.first;
		boolean race;
		synchronized (this) {
			race = this.hedged && !loser.done;
		}
		if (this.hedged) {
			this.outcomes.accept((side == this.other) ? HedgeOutcome.HEDGE_WON : HedgeOutcome.FIRST_WON);
		}
		if (race) {
			loser.lost = true;
			loser.cancel();
		}
		return true;
	}

	private void failed(Side side, Throwable error) {
		Side loser = (side == this.first) ? this.other : this.first;
		boolean cancelOther;
		boolean noWinner;
		synchronized (this) {
			side.done = true;
			if (this.terminated || (this.winner != NONE && this.winner != side.index)) {
				return;
			}
			boolean otherRuns = this.hedged && !loser.done;
			if (this.winner == NONE && otherRuns
					&& FailureClassifier.outcomeOf(error).action() == Outcome.Action.FALL_BACK) {
				// the other side may still answer
				return;
			}
			this.terminated = true;
			cancelOther = this.winner == NONE && otherRuns;
			noWinner = this.winner == NONE && this.hedged && !otherRuns;
		}
		stopTimer();
		if (cancelOther) {
			loser.cancel();
		}
		if (noWinner) {
			this.outcomes.accept(HedgeOutcome.NO_WINNER);
		}
		this.actual.onError(error);
	}

	private void completed(Side side) {
		// a side that ends well has had its token: it won then, unless it lost the race at it
		boolean mine = won(side);
		synchronized (this) {
			side.done = true;
			if (this.terminated || !mine) {
				return;
			}
			this.terminated = true;
		}
		stopTimer();
		this.actual.onComplete();
	}

	@Override
	public void request(long n) {
		if (!Operators.validate(n)) {
			return;
		}
		Subscription first;
		Subscription second;
		synchronized (this) {
			this.requested = Operators.addCap(this.requested, n);
			first = this.first.subscription;
			second = this.other.subscription;
		}
		if (first != null) {
			first.request(n);
		}
		if (second != null) {
			second.request(n);
		}
	}

	@Override
	public void cancel() {
		this.cancelled = true;
		stopTimer();
		this.first.cancel();
		this.other.cancel();
	}

	private void stopTimer() {
		Disposable timer = this.timer;
		if (timer != null) {
			timer.dispose();
		}
	}

	/** One side of the race: the subscriber of its endpoint's call, and the race that call is told of. */
	private final class Side implements CoreSubscriber<T>, CallContext.Race {

		private final int index;

		private @Nullable Subscription subscription;

		private volatile boolean done;

		private volatile boolean lost;

		private volatile boolean cancelled;

		Side(int index) {
			this.index = index;
		}

		void start(Function<CallContext.Race, Publisher<? extends T>> call) {
			if (!this.cancelled) {
				call.apply(this).subscribe(this);
			}
		}

		@Override
		public boolean firstToken() {
			return won(this);
		}

		@Override
		public boolean lost() {
			return this.lost;
		}

		@Override
		public Context currentContext() {
			return Hedge.this.actual.currentContext();
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			long requested;
			synchronized (Hedge.this) {
				this.subscription = subscription;
				requested = Hedge.this.requested;
			}
			if (this.cancelled) {
				subscription.cancel();
			}
			else if (requested > 0) {
				subscription.request(requested);
			}
		}

		@Override
		public void onNext(T element) {
			if (Hedge.this.winner == this.index) {
				Hedge.this.actual.onNext(element);
			}
		}

		@Override
		public void onError(Throwable error) {
			failed(this, error);
		}

		@Override
		public void onComplete() {
			completed(this);
		}

		void cancel() {
			this.cancelled = true;
			Subscription subscription;
			synchronized (Hedge.this) {
				subscription = this.subscription;
			}
			if (subscription != null) {
				subscription.cancel();
			}
		}

	}

}
