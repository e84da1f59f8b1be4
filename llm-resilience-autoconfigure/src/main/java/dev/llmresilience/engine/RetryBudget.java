package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

import dev.llmresilience.gateway.EndpointSettings;

/**
 * The retry budget of one endpoint (docs/capacity.md), Finagle's and Envoy's idea: its retries
 * over the last minute may be at most {@code retry.budget} percent of its calls over that minute,
 * plus {@code retry.budget-min-per-second} a second, so that retries never multiply an overloaded
 * provider's load while a lone call still gets its attempts. A minute of one-second buckets, counted
 * without a lock on the success path; counted per replica.
 */
final class RetryBudget {

	/** Why a retry was refused. */
	static final String SPENT = "the endpoint's retry budget (retry.budget) is spent";

	private static final int SECONDS = 60;

	private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

	private final float percent;

	private final long floor;

	private final AtomicReferenceArray<Second> seconds = new AtomicReferenceArray<>(SECONDS);

	private final LongAdder refused = new LongAdder();

	RetryBudget(EndpointSettings.RetrySettings settings) {
		this.percent = settings.budget();
		this.floor = (long) settings.budgetMinPerSecond() * SECONDS;
	}

	/**
	 * Count a call (its first attempt): no lock, as every call comes here.
	 * @param now the scheduler's time
	 */
	void call(long now) {
		second(now).calls.increment();
	}

	/**
	 * Spend a retry, if the budget has one. Only a failed attempt comes here; the lock makes two
	 * retries at once see each other.
	 * @param now the scheduler's time
	 * @return true when the retry may go
	 */
	synchronized boolean tryRetry(long now) {
		Window window = window(now);
		if (window.retries() + 1 > window.allowed()) {
			this.refused.increment();
			return false;
		}
		second(now).retries.increment();
		return true;
	}

	/**
	 * The budget as the actuator shows it.
	 * @param now the scheduler's time
	 * @return calls and retries over the last minute, what is left, and the retries refused so far
	 */
	State state(long now) {
		Window window = window(now);
		long allowed = (long) Math.floor(window.allowed());
		return new State(this.percent, this.floor / SECONDS, window.calls(), window.retries(),
				Math.max(0, allowed - window.retries()), this.refused.sum());
	}

	// The calls and retries of the last minute's seconds.
	private Window window(long now) {
		long current = Math.floorDiv(now, SECOND);
		long calls = 0;
		long retries = 0;
		for (int i = 0; i < SECONDS; i++) {
			Second second = this.seconds.get(i);
			if (second != null && current - second.second < SECONDS) {
				calls += second.calls.sum();
				retries += second.retries.sum();
			}
		}
		return new Window(calls, retries, calls * this.percent / 100 + this.floor);
	}

	// This second's counts, in the slot that held an older second until now.
	private Second second(long now) {
		long current = Math.floorDiv(now, SECOND);
		int slot = (int) Math.floorMod(current, (long) SECONDS);
		while (true) {
			Second second = this.seconds.get(slot);
			if (second != null && second.second == current) {
				return second;
			}
			Second fresh = new Second(current);
			if (this.seconds.compareAndSet(slot, second, fresh)) {
				return fresh;
			}
		}
	}

	private record Window(long calls, long retries, double allowed) {

	}

	private static final class Second {

		private final long second;

		private final LongAdder calls = new LongAdder();

		private final LongAdder retries = new LongAdder();

		private Second(long second) {
			this.second = second;
		}

	}

	/**
	 * @param percent {@code retry.budget}
	 * @param minPerSecond {@code retry.budget-min-per-second}
	 * @param calls calls over the last minute
	 * @param retries retries over the last minute
	 * @param left retries the budget still has
	 * @param refused retries refused since start-up
	 */
	record State(float percent, long minPerSecond, long calls, long retries, long left, long refused) {

	}

}
