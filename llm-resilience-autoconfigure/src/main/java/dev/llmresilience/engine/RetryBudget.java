package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;

import dev.llmresilience.gateway.EndpointSettings;

/**
 * The retry budget of one endpoint (docs/capacity.md), Finagle's and Envoy's idea: its retries
 * over the last minute may be at most {@code retry.budget} percent of its calls over that minute,
 * plus {@code retry.budget-min-per-second} a second, so that retries never multiply an overloaded
 * provider's load while a lone call still gets its attempts. A minute of one-second buckets;
 * counted per replica.
 */
final class RetryBudget {

	/** Why a retry was refused. */
	static final String SPENT = "the endpoint's retry budget (retry.budget) is spent";

	private static final int SECONDS = 60;

	private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

	private final float percent;

	private final long floor;

	private final long[] second = new long[SECONDS];

	private final int[] calls = new int[SECONDS];

	private final int[] retries = new int[SECONDS];

	private long refused;

	RetryBudget(EndpointSettings.RetrySettings settings) {
		this.percent = settings.budget();
		this.floor = (long) settings.budgetMinPerSecond() * SECONDS;
	}

	/**
	 * Count a call (its first attempt).
	 * @param now the scheduler's time
	 */
	synchronized void call(long now) {
		this.calls[bucket(now)]++;
	}

	/**
	 * Spend a retry, if the budget has one.
	 * @param now the scheduler's time
	 * @return true when the retry may go
	 */
	synchronized boolean tryRetry(long now) {
		int bucket = bucket(now);
		long current = Math.floorDiv(now, SECOND);
		long calls = 0;
		long retries = 0;
		for (int i = 0; i < SECONDS; i++) {
			if (current - this.second[i] < SECONDS) {
				calls += this.calls[i];
				retries += this.retries[i];
			}
		}
		if (retries + 1 > calls * this.percent / 100 + this.floor) {
			this.refused++;
			return false;
		}
		this.retries[bucket]++;
		return true;
	}

	// The bucket of this second, emptied when it last held an older one.
	private int bucket(long now) {
		long current = Math.floorDiv(now, SECOND);
		int bucket = (int) Math.floorMod(current, (long) SECONDS);
		if (this.second[bucket] != current) {
			this.second[bucket] = current;
			this.calls[bucket] = 0;
			this.retries[bucket] = 0;
		}
		return bucket;
	}

	/**
	 * The budget as the actuator shows it.
	 * @param now the scheduler's time
	 * @return calls and retries over the last minute, what is left, and the retries refused so far
	 */
	synchronized State state(long now) {
		long current = Math.floorDiv(now, SECOND);
		long calls = 0;
		long retries = 0;
		for (int i = 0; i < SECONDS; i++) {
			if (current - this.second[i] < SECONDS) {
				calls += this.calls[i];
				retries += this.retries[i];
			}
		}
		long allowed = (long) Math.floor(calls * this.percent / 100 + this.floor);
		return new State(this.percent, this.floor / SECONDS, calls, retries, Math.max(0, allowed - retries),
				this.refused);
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
