package dev.llmresilience.engine;

import java.time.Duration;

/**
 * One endpoint's time to first token as a peak-sensitive, exponentially weighted moving average
 * (Finagle's and Linkerd's peak EWMA): a slower observation replaces the estimate at once, a faster
 * one pulls it down with a weight that grows with the time since the last one; and the estimate
 * decays toward zero while nothing is observed, so an endpoint left alone is tried again and a
 * recovered one wins its traffic back. Failures never lower it.
 */
final class PeakEwma {

	private final double decayNanos;

	private double estimate;

	private long stamp;

	private boolean observed;

	PeakEwma(Duration decay) {
		this.decayNanos = decay.toNanos();
	}

	/**
	 * A successful attempt's time to first token.
	 * @param nanos the time
	 * @param now the time now
	 */
	synchronized void observe(long nanos, long now) {
		if (!this.observed || nanos > this.estimate) {
			this.estimate = nanos;
		}
		else {
			double kept = weight(now);
			this.estimate = this.estimate * kept + nanos * (1 - kept);
		}
		this.stamp = now;
		this.observed = true;
	}

	/**
	 * A failed attempt's time to its failure: raises the estimate if longer, never lowers it.
	 * @param nanos the time
	 * @param now the time now
	 */
	synchronized void penalize(long nanos, long now) {
		this.estimate = this.observed ? Math.max(this.estimate, nanos) : nanos;
		this.stamp = now;
		this.observed = true;
	}

	/**
	 * The estimate now, decayed since the last observation.
	 * @param now the time now
	 * @return nanoseconds; 0 before the first observation
	 */
	synchronized double estimate(long now) {
		return this.observed ? this.estimate * weight(now) : 0;
	}

	private double weight(long now) {
		return Math.exp(-Math.max(0, now - this.stamp) / this.decayNanos);
	}

}
