package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.LlmGatewayListener.HedgeOutcome;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.CorePublisher;
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
 * What came of it is told by {@link Side}: whose elements were handed on ({@link #answering()}),
 * whose failure ended it ({@link #failing()}), and how many endpoints it tried
 * ({@link #endpointsCovered()}). It is subscribed once.
 *
 * @param <T> what each side hands on: a completion, or a stream's chunks
 */
final class Hedge<T> implements CorePublisher<T>, Subscription {

	@SuppressWarnings("rawtypes")
	private static final AtomicReferenceFieldUpdater<Hedge, Hedge.Racer> WINNER = AtomicReferenceFieldUpdater
		.newUpdater(Hedge.class, Hedge.Racer.class, "winner");

	private final Function<CallContext.Race, Publisher<? extends T>> firstCall;

	private final Function<CallContext.Race, Publisher<? extends T>> second;

	private final long delayNanos;

	private final BooleanSupplier secondAdmits;

	private final HedgePolicy policy;

	private final Consumer<HedgeOutcome> outcomes;

	private final Racer first = new Racer(Side.FIRST);

	private final Racer other = new Racer(Side.SECOND);

	private CoreSubscriber<? super T> actual = Operators.emptySubscriber();

	private volatile @Nullable Racer winner;

	// the side whose failure was handed on
	private volatile @Nullable Racer failed;

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

	@Override
	public void subscribe(Subscriber<? super T> actual) {
		subscribe(Operators.toCoreSubscriber(actual));
	}

	@Override
	public void subscribe(CoreSubscriber<? super T> actual) {
		this.actual = actual;
		actual.onSubscribe(this);
		this.first.start(this.firstCall);
		if (this.winner == null && !this.first.done && !this.cancelled) {
			this.timer = Schedulers.parallel().schedule(this::delayPassed, this.delayNanos, TimeUnit.NANOSECONDS);
		}
	}

	/**
	 * The side whose elements were handed on: the winner, once one has won.
	 * @return the side that won, or {@link Side#FIRST} while none has
	 */
	Side answering() {
		Racer winner = this.winner;
		return (winner != null) ? winner.side : Side.FIRST;
	}

	/**
	 * The side whose failure ended the hedge: the winner's, once one has won, else the one that
	 * failed last (or the only one, when the hedge was never sent).
	 * @return the side
	 */
	Side failing() {
		Racer failed = this.failed;
		return (failed != null) ? failed.side : Side.FIRST;
	}

	/**
	 * How many endpoints the hedge tried: the walk goes on past them.
	 * @return 2 when the request was sent to the second endpoint too, else 1
	 */
	int endpointsCovered() {
		return this.hedged ? 2 : 1;
	}

	private void delayPassed() {
		synchronized (this) {
			if (this.cancelled || this.terminated || this.winner != null || this.first.done
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

	private boolean won(Racer side) {
		if (!WINNER.compareAndSet(this, null, side)) {
			return this.winner == side;
		}
		stopTimer();
		Racer loser = (side == this.first) ? this.other : this.first;
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

	private void failed(Racer side, Throwable error) {
		Racer loser = (side == this.first) ? this.other : this.first;
		boolean cancelOther;
		boolean noWinner;
		synchronized (this) {
			side.done = true;
			Racer winner = this.winner;
			if (this.terminated || (winner != null && winner != side)) {
				return;
			}
			boolean otherRuns = this.hedged && !loser.done;
			if (winner == null && otherRuns
					&& FailureClassifier.outcomeOf(error).action() == Outcome.Action.FALL_BACK) {
				// the other side may still answer
				return;
			}
			this.terminated = true;
			this.failed = side;
			cancelOther = winner == null && otherRuns;
			noWinner = winner == null && this.hedged && !otherRuns;
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

	private void completed(Racer side) {
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

	/** A side of a hedge: the endpoint tried first, or the next one, which the hedge was sent to. */
	enum Side {

		FIRST, SECOND

	}

	/** One side of the race: the subscriber of its endpoint's call, and the race that call is told of. */
	private final class Racer implements CoreSubscriber<T>, CallContext.Race {

		private final Side side;

		private @Nullable Subscription subscription;

		private volatile boolean done;

		private volatile boolean lost;

		private volatile boolean cancelled;

		Racer(Side side) {
			this.side = side;
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
			if (Hedge.this.winner == this) {
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
