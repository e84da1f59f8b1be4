package dev.llmresilience.engine;

/**
 * The hedge budget of one route: hedged calls at most {@code max-ratio} of the route's calls in a
 * sliding window, counted in ten slots of a tenth of the window each. A hedge is allowed while
 * {@code hedges + 1 <= max-ratio x calls}, this call included, so with 10 % the first hedge needs
 * ten calls in the window: a quiet route hedges rarely, and a burst of slow answers cannot double
 * the load on the providers.
 */
final class HedgeBudget {

	private static final int SLOTS = 10;

	private final double maxRatio;

	private final long slotNanos;

	private final long[] calls = new long[SLOTS];

	private final long[] hedges = new long[SLOTS];

	private long slot = Long.MIN_VALUE;

	HedgeBudget(double maxRatio, long windowNanos) {
		this.maxRatio = maxRatio;
		this.slotNanos = Math.max(1, windowNanos / SLOTS);
	}

	synchronized void recordCall(long now) {
		roll(now);
		this.calls[index()]++;
	}

	synchronized boolean tryAcquire(long now) {
		roll(now);
		if (sum(this.hedges) + 1 > this.maxRatio * sum(this.calls)) {
			return false;
		}
		this.hedges[index()]++;
		return true;
	}

	synchronized long calls(long now) {
		roll(now);
		return sum(this.calls);
	}

	synchronized long hedges(long now) {
		roll(now);
		return sum(this.hedges);
	}

	private void roll(long now) {
		long current = Math.floorDiv(now, this.slotNanos);
		if (this.slot == Long.MIN_VALUE) {
			this.slot = current;
			return;
		}
		long passed = current - this.slot;
		for (long i = 1; i <= Math.min(passed, SLOTS); i++) {
			int index = (int) Math.floorMod(this.slot + i, (long) SLOTS);
			this.calls[index] = 0;
			this.hedges[index] = 0;
		}
		if (passed > 0) {
			this.slot = current;
		}
	}

	private int index() {
		return (int) Math.floorMod(this.slot, (long) SLOTS);
	}

	private static long sum(long[] counts) {
		long sum = 0;
		for (long count : counts) {
			sum += count;
		}
		return sum;
	}

}
