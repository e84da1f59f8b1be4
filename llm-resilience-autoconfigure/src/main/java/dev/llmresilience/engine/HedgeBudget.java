package dev.llmresilience.engine;

/**
 * The hedge budget of one route: hedged calls at most {@code max-ratio} of the route's calls in a
 * sliding window, counted in ten slots of a tenth of the window each
 * ({@link SlidingCounts}: a call counted without a lock). A hedge is allowed while
 * {@code hedges + 1 <= max-ratio x calls}, this call included, so with 10 % the first hedge needs
 * ten calls in the window: a quiet route hedges rarely, and a burst of slow answers cannot double
 * the load on the providers.
 */
final class HedgeBudget {

	private static final int SLOTS = 10;

	private final double maxRatio;

	private final SlidingCounts counts;

	HedgeBudget(double maxRatio, long windowNanos) {
		this.maxRatio = maxRatio;
		this.counts = new SlidingCounts(windowNanos, SLOTS);
	}

	void recordCall(long now) {
		this.counts.call(now);
	}

	// the lock makes two hedges at once see each other
	synchronized boolean tryAcquire(long now) {
		SlidingCounts.Window window = this.counts.window(now);
		if (window.extras() + 1 > this.maxRatio * window.calls()) {
			return false;
		}
		this.counts.extra(now);
		return true;
	}

	long calls(long now) {
		return this.counts.window(now).calls();
	}

	long hedges(long now) {
		return this.counts.window(now).extras();
	}

}
