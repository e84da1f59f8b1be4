package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.IntSupplier;

import dev.llmresilience.gateway.EndpointSettings;

/**
 * The retry budget of one endpoint (docs/capacity.md), Finagle's and Envoy's idea: its retries
 * over the last minute may be at most {@code retry.budget} percent of its calls over that minute,
 * plus {@code retry.budget-min-per-second} a second, so that retries never multiply an overloaded
 * provider's load while a lone call still gets its attempts. A minute of one-second buckets, counted
 * without a lock on the success path; counted per replica. Replicas that each keep their retries
 * within a share of their own calls keep the fleet's within that share of the fleet's calls; the
 * floor is what a fleet would multiply, so with shared state each replica has its share of it
 * ({@link #fleet}).
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

	// the replicas the floor is shared among (1 without shared state)
	private volatile IntSupplier replicas = () -> 1;

	RetryBudget(EndpointSettings.RetrySettings settings) {
		this.percent = settings.budget();
		this.floor = (long) settings.budgetMinPerSecond() * SECONDS;
	}

	/**
	 * Share the floor among the fleet's replicas: each has {@code budget-min-per-second} divided
	 * by the replicas alive, so that the fleet retries that many a second beyond the share, not
	 * that many times the replicas.
	 * @param replicas the replicas alive, as last heard
	 */
	void fleet(IntSupplier replicas) {
		this.replicas = replicas;
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
		return window.calls() * this.percent / 100 + floor();
	}

	// this replica's share of the floor, over the window
	private double floor() {
		return (double) this.floor / Math.max(1, this.replicas.getAsInt());
	}

	/**
	 * @param percent {@code retry.budget}
	 * @param minPerSecond {@code retry.budget-min-per-second}, the fleet's (this replica's share of it is in {@code left})
	 * @param calls calls over the last minute
	 * @param retries retries over the last minute
	 * @param left retries the budget still has
	 * @param refused retries refused since start-up
	 */
	record State(float percent, long minPerSecond, long calls, long retries, long left, long refused) {

	}

}
