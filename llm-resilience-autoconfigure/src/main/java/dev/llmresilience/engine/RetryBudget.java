package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;
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

	private final SlidingCounts counts = new SlidingCounts(SECONDS * SECOND, SECONDS);

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
		this.counts.call(now);
	}

	/**
	 * Spend a retry, if the budget has one. Only a failed attempt comes here; the lock makes two
	 * retries at once see each other.
	 * @param now the scheduler's time
	 * @return true when the retry may go
	 */
	synchronized boolean tryRetry(long now) {
		SlidingCounts.Window window = this.counts.window(now);
		if (window.extras() + 1 > allowed(window)) {
			this.refused.increment();
			return false;
		}
		this.counts.extra(now);
		return true;
	}

	/**
	 * The budget as the actuator shows it.
	 * @param now the scheduler's time
	 * @return calls and retries over the last minute, what is left, and the retries refused so far
	 */
	State state(long now) {
		SlidingCounts.Window window = this.counts.window(now);
		long allowed = (long) Math.floor(allowed(window));
		return new State(this.percent, this.floor / SECONDS, window.calls(), window.extras(),
				Math.max(0, allowed - window.extras()), this.refused.sum());
	}

	// the retries the window's calls allow
	private double allowed(SlidingCounts.Window window) {
		return window.calls() * this.percent / 100 + this.floor;
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
