package dev.llmresilience.engine;

import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * The attempts' timers on one scheduler, in one queue ordered by when each is due, with a task of
 * the scheduler armed for the earliest. A timer due no earlier than the task already armed arms
 * nothing, and a timer disposed before it is due leaves the queue but not the armed task, which
 * wakes, runs what is due, if anything, and arms the next. So calls that each set a timer at the
 * same bound (the attempt's timeout) and end before it do not touch the scheduler at all: a
 * {@code ScheduledThreadPoolExecutor} wakes its thread whenever a task becomes its earliest, which
 * one that was alone in it and was removed when cancelled does on every call, a context switch on
 * the critical path of a call that is answered at once. Each timer still runs when it is due, on
 * the scheduler's clock, and a disposed one never runs; the queue holds only timers not yet run
 * nor disposed, so a timer holds its attempt no longer than the attempt lasts.
 * <p>
 * Lock-free: a timer is added to the queue before the armed time is read, and the armed time is
 * cleared before the queue is read when the armed task wakes, so one of the two sees the other and
 * every queued timer has a task armed at or before it is due (two may be armed at once: the later
 * wakes to find nothing due).
 */
final class AttemptTimers {

	/** The timers of the scheduler the last attempt used (virtual time in tests may change it). */
	private static volatile @Nullable AttemptTimers last;

	private final Scheduler scheduler;

	private final ConcurrentSkipListMap<Timer, Boolean> queue = new ConcurrentSkipListMap<>();

	private final AtomicLong sequence = new AtomicLong();

	/** When the task armed last is due, on the scheduler's clock; {@link Long#MAX_VALUE} for none. */
	private final AtomicLong armedAt = new AtomicLong(Long.MAX_VALUE);

	private final Runnable wake = this::wake;

	private AttemptTimers(Scheduler scheduler) {
		this.scheduler = scheduler;
	}

	/**
	 * The timers on a scheduler.
	 * @param scheduler the scheduler whose clock the timers are on and that runs them
	 * @return its timers
	 */
	static AttemptTimers on(Scheduler scheduler) {
		AttemptTimers timers = last;
		if (timers == null || timers.scheduler != scheduler) {
			timers = new AttemptTimers(scheduler);
			last = timers;
		}
		return timers;
	}

	/**
	 * Run a task at a time, unless disposed before.
	 * @param task the task, run on the scheduler
	 * @param at when, on the scheduler's clock in nanoseconds
	 * @return disposes the timer
	 */
	Disposable schedule(Runnable task, long at) {
		Timer timer = new Timer(task, at, this.sequence.getAndIncrement());
		this.queue.put(timer, Boolean.TRUE);
		try {
			arm(at);
		}
		catch (RuntimeException ex) {
			// a scheduler that refuses tasks (disposed) refuses this timer, as it would have on its own
			this.queue.remove(timer);
			throw ex;
		}
		return timer;
	}

	/**
	 * The attempts' timers neither run nor disposed on a scheduler, for a count of what a process
	 * holds (they are not in the scheduler's own queue, which holds at most the tasks armed for them).
	 * @param scheduler the scheduler
	 * @return its timers pending, 0 if the last attempt used another
	 */
	static int pendingOn(Scheduler scheduler) {
		AttemptTimers timers = last;
		return (timers != null && timers.scheduler == scheduler) ? timers.pending() : 0;
	}

	/** The timers neither run nor disposed. */
	int pending() {
		return this.queue.size();
	}

	private void arm(long at) {
		while (true) {
			long armed = this.armedAt.get();
			if (at >= armed) {
				return;
			}
			if (this.armedAt.compareAndSet(armed, at)) {
				try {
					this.scheduler.schedule(this.wake, Math.max(0, at - now()), TimeUnit.NANOSECONDS);
				}
				catch (RuntimeException ex) {
					this.armedAt.compareAndSet(at, Long.MAX_VALUE);
					throw ex;
				}
				return;
			}
		}
	}

	// runs every timer due, then arms the next; a task's failure does not stop the others, and is
	// thrown at the end for the scheduler to handle, as it would have been alone
	private void wake() {
		this.armedAt.set(Long.MAX_VALUE);
		long now = now();
		@Nullable Throwable failure = null;
		while (true) {
			Map.Entry<Timer, Boolean> first = this.queue.firstEntry();
			if (first == null) {
				break;
			}
			Timer timer = first.getKey();
			if (timer.at > now) {
				arm(timer.at);
				break;
			}
			if (this.queue.remove(timer) != null) {
				try {
					timer.task.run();
				}
				catch (RuntimeException | Error ex) {
					failure = (failure != null) ? failure : ex;
				}
			}
		}
		if (failure instanceof RuntimeException runtime) {
			throw runtime;
		}
		if (failure instanceof Error error) {
			throw error;
		}
	}

	private long now() {
		return this.scheduler.now(TimeUnit.NANOSECONDS);
	}

	/** One timer: ordered by when it is due, then by when it was set. */
	private final class Timer implements Disposable, Comparable<Timer> {

		final Runnable task;

		final long at;

		final long order;

		Timer(Runnable task, long at, long order) {
			this.task = task;
			this.at = at;
			this.order = order;
		}

		@Override
		public void dispose() {
			AttemptTimers.this.queue.remove(this);
		}

		@Override
		public boolean isDisposed() {
			return !AttemptTimers.this.queue.containsKey(this);
		}

		@Override
		public int compareTo(Timer other) {
			int byTime = Long.compare(this.at, other.at);
			return (byTime != 0) ? byTime : Long.compare(this.order, other.order);
		}

	}

}
