package dev.llmresilience.benchmarks;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Latencies of one run, recorded without locks into a preallocated array and read sorted.
 */
final class LatencyRecorder {

	private final long[] nanos;

	private final AtomicInteger count = new AtomicInteger();

	LatencyRecorder(int capacity) {
		this.nanos = new long[capacity];
	}

	void reset() {
		this.count.set(0);
	}

	void record(long latencyNanos) {
		int index = this.count.getAndIncrement();
		if (index < this.nanos.length) {
			this.nanos[index] = latencyNanos;
		}
	}

	long[] sorted() {
		long[] copy = Arrays.copyOf(this.nanos, Math.min(this.count.get(), this.nanos.length));
		Arrays.sort(copy);
		return copy;
	}

	/**
	 * A percentile of sorted values (nearest rank).
	 * @param sorted the values, ascending
	 * @param percent the percentile, 0 to 100
	 * @return the value, or 0 for none
	 */
	static long percentile(long[] sorted, double percent) {
		if (sorted.length == 0) {
			return 0;
		}
		int rank = (int) Math.ceil(percent / 100.0 * sorted.length);
		return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
	}

	static double mean(long[] values) {
		return (values.length == 0) ? 0 : Arrays.stream(values).average().orElse(0);
	}

}
