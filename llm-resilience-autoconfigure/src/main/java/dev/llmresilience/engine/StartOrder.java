package dev.llmresilience.engine;

import java.util.ArrayDeque;
import java.util.Comparator;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * Hands a closed breaker its attempts' outcomes in the order the attempts started, not the order they
 * ended. Resilience4j's window holds the last calls to end; when many calls start at once (an
 * application's first seconds under load, or a route's next endpoint taking over the calls of one
 * that just opened), the failures that come back at once (a 500, a refused connection) end long
 * before the successes that started with them, so the first outcomes to reach the window are all
 * failures and the breaker of a healthy endpoint with a few percent of errors opens. So an outcome is
 * held until every attempt that started before it has ended, and for at most {@code wait} after its
 * own end: an outage of instant failures still opens the breaker, at most {@code wait} late, and a
 * long stream in flight delays nothing by more. Held outcomes are let go as attempts start and end,
 * and by one timer, armed while something is held for the oldest held outcome's last moment. Only
 * the closed state's window is ordered: a half-open state's probes, and any attempt that
 * ends once the window that admitted it is gone (the breaker opened, or was moved by hand), are
 * recorded as they end, and what that window held goes as the breaker leaves the closed state, into
 * the state it moves to, where it changes nothing.
 * <p>
 * What it keeps is bounded by the attempts in flight (the bulkhead) and the outcomes held (at most
 * those of {@code wait}); outcomes are recorded outside its lock, one at a time, in the order they
 * were let go.
 */
final class StartOrder {

	private static final Comparator<Slot> BY_START = Comparator.comparingLong((slot) -> slot.sequence);

	private final CircuitBreaker breaker;

	private final long waitNanos;

	private final Object lock = new Object();

	// the closed window the slots below belong to
	private CircuitBreaker.@Nullable Metrics window;

	private long sequence;

	// guarded by lock: attempts of the window in flight, in start order
	private final TreeSet<Slot> running = new TreeSet<>(BY_START);

	// guarded by lock: ended attempts whose outcome is held, in start order and in end order
	private final TreeSet<Slot> held = new TreeSet<>(BY_START);

	private final ArrayDeque<Slot> heldByEnd = new ArrayDeque<>();

	// outcomes let go, recorded one at a time by whichever thread gets there first
	private final ConcurrentLinkedQueue<Runnable> ready = new ConcurrentLinkedQueue<>();

	private final AtomicInteger draining = new AtomicInteger();

	// guarded by lock: the timer armed for the oldest held outcome, null when none is
	private @Nullable Disposable timer;

	/**
	 * Order the closed-state outcomes of a breaker.
	 * @param breaker the breaker
	 * @param waitNanos how long an outcome may be held after its end, 0 for none
	 */
	StartOrder(CircuitBreaker breaker, long waitNanos) {
		this.breaker = breaker;
		this.waitNanos = waitNanos;
	}

	/**
	 * A slot for an attempt the breaker has just let through, or {@code null} when its outcome is
	 * recorded as it ends (ordering off, or the breaker not closed).
	 * @param window {@code breaker.getMetrics()} when the permit was taken
	 * @param now the time, in nanoseconds
	 * @return the attempt's slot, or {@code null}
	 */
	@Nullable Slot start(CircuitBreaker.Metrics window, long now) {
		if (this.waitNanos <= 0 || this.breaker.getState() != CircuitBreaker.State.CLOSED
				|| this.breaker.getMetrics() != window) {
			return null;
		}
		Slot slot;
		synchronized (this.lock) {
			if (this.window != window) {
				// a new closed state (after a reset or a recovery)
				forget();
				this.window = window;
			}
			slot = new Slot(this.sequence++, window);
			this.running.add(slot);
			letGo(now);
		}
		drain();
		return slot;
	}

	/**
	 * The attempt of a slot has ended: record its outcome once every attempt that started before it
	 * has ended, or {@code wait} from now at the latest.
	 * @param slot its slot
	 * @param outcome what to record ({@code null} for an end the breaker does not record)
	 * @param now the time, in nanoseconds
	 * @param scheduler the attempt's scheduler, whose clock {@code now} is read from, for the timer
	 */
	void end(Slot slot, @Nullable Runnable outcome, long now, Scheduler scheduler) {
		synchronized (this.lock) {
			if (this.window != null && this.breaker.getMetrics() != this.window) {
				// the window is gone (the breaker opened, or was moved): its outcomes go as they end
				forget();
			}
			boolean current = this.running.remove(slot) && slot.window == this.window;
			if (outcome != null) {
				if (current && this.held.isEmpty()
						&& (this.running.isEmpty() || this.running.first().sequence > slot.sequence)) {
					// nothing started before it is still running, nor held: its turn is now
					this.ready.add(outcome);
				}
				else if (current) {
					slot.outcome = outcome;
					slot.ended = now;
					this.held.add(slot);
					this.heldByEnd.add(slot);
				}
				else {
					this.ready.add(outcome);
				}
			}
			letGo(now);
			arm(now, scheduler);
		}
		drain();
	}

	// under the lock: a timer for the oldest held outcome's last moment, unless one is armed
	private void arm(long now, Scheduler scheduler) {
		Slot oldest = this.heldByEnd.peekFirst();
		if (oldest == null || this.timer != null) {
			return;
		}
		long delay = Math.max(0, oldest.ended + this.waitNanos - now);
		try {
			this.timer = scheduler.schedule(() -> expired(scheduler), delay, TimeUnit.NANOSECONDS);
		}
		catch (RejectedExecutionException ex) {
			// the scheduler is shutting down: the next attempt to start or end lets them go
		}
	}

	private void expired(Scheduler scheduler) {
		synchronized (this.lock) {
			this.timer = null;
			long now = scheduler.now(TimeUnit.NANOSECONDS);
			if (this.window != null && this.breaker.getMetrics() != this.window) {
				forget();
			}
			letGo(now);
			arm(now, scheduler);
		}
		drain();
	}

	/**
	 * The breaker has left the closed state (or started a new window in it): what the window held
	 * goes now, into the state it is in, where it changes nothing.
	 */
	void windowEnded() {
		synchronized (this.lock) {
			if (this.window != null) {
				forget();
			}
		}
		drain();
	}

	/**
	 * Outcomes held now.
	 * @return their number
	 */
	int held() {
		synchronized (this.lock) {
			return this.held.size();
		}
	}

	// under the lock: what no running attempt started before, then what has been held long enough
	// (with whatever ended and started before it, in start order)
	private void letGo(long now) {
		long firstRunning = this.running.isEmpty() ? Long.MAX_VALUE : this.running.first().sequence;
		while (!this.held.isEmpty() && this.held.first().sequence < firstRunning) {
			release(this.held.pollFirst());
		}
		Slot oldest;
		while ((oldest = this.heldByEnd.peekFirst()) != null && (oldest.released || now - oldest.ended >= this.waitNanos)) {
			this.heldByEnd.pollFirst();
			while (!oldest.released) {
				release(this.held.pollFirst());
			}
		}
	}

	// under the lock: the window is gone, and what it held goes now, in start order
	private void forget() {
		this.held.forEach((slot) -> this.ready.add(slot.outcome));
		this.held.clear();
		this.heldByEnd.clear();
		this.running.clear();
		this.window = null;
	}

	private void release(Slot slot) {
		slot.released = true;
		this.ready.add(slot.outcome);
	}

	private void drain() {
		if (this.draining.getAndIncrement() != 0) {
			return;
		}
		int missed = 1;
		do {
			Runnable outcome;
			while ((outcome = this.ready.poll()) != null) {
				outcome.run();
			}
			missed = this.draining.addAndGet(-missed);
		}
		while (missed != 0);
	}

	/** An attempt's place in its window's start order. */
	static final class Slot {

		private final long sequence;

		private final CircuitBreaker.Metrics window;

		// guarded by the order's lock
		private Runnable outcome = () -> {
		};

		private long ended;

		private boolean released;

		private Slot(long sequence, CircuitBreaker.Metrics window) {
			this.sequence = sequence;
			this.window = window;
		}

	}

}
