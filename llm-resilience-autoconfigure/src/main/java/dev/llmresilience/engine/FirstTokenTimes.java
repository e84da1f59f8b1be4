package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.jspecify.annotations.Nullable;

/**
 * The time to first token of an endpoint's recent attempts, as a histogram: from the request sent
 * to the first chunk that carries part of the answer (for an answer in one piece, to the answer).
 * An adaptive hedge delay is read from it. It keeps the last {@value #HALF} to
 * {@value #WINDOW} attempts: two halves of {@value #HALF}, the older one dropped each time the newer
 * one is full, so it follows a provider that slows down within a few hundred calls, and costs one
 * counter increment per attempt. Buckets are an eighth of an octave wide (at most 9 % apart), from
 * 8 microseconds to 9.5 hours; a percentile reads the upper edge of its bucket.
 */
final class FirstTokenTimes {

	/** Samples in each half of the window. */
	public static final int HALF = 256;

	/** The most samples a percentile is read from. */
	public static final int WINDOW = 2 * HALF;

	/** Fewer samples than this give no percentile. */
	public static final int MIN_SAMPLES = 20;

	private static final int SUB_BUCKETS = 8;

	private static final int OCTAVES = 32;

	private final AtomicLongArray[] halves = { new AtomicLongArray(OCTAVES * SUB_BUCKETS),
			new AtomicLongArray(OCTAVES * SUB_BUCKETS) };

	private final AtomicLong samples = new AtomicLong();

	/**
	 * Record one attempt's time to first token.
	 * @param nanos the time, in nanoseconds
	 */
	void record(long nanos) {
		long count = this.samples.getAndIncrement();
		AtomicLongArray current = this.halves[(int) ((count / HALF) & 1)];
		if (count % HALF == 0 && count > 0) {
			// this half now starts again: what it held is the oldest half of the window
			for (int i = 0; i < current.length(); i++) {
				current.set(i, 0);
			}
		}
		current.incrementAndGet(bucket(nanos));
	}

	/**
	 * How many attempts have been recorded since start-up.
	 * @return the count
	 */
	public long count() {
		return this.samples.get();
	}

	/**
	 * A percentile of the recent first-token times.
	 * @param percent the percentile, above 0 and at most 100
	 * @return the time, or {@code null} with fewer than {@value #MIN_SAMPLES} samples in the window
	 */
	public @Nullable Duration percentile(double percent) {
		// read on every call of a route that hedges adaptively: no allocation but the answer
		AtomicLongArray older = this.halves[0];
		AtomicLongArray newer = this.halves[1];
		int buckets = older.length();
		long total = 0;
		for (int i = 0; i < buckets; i++) {
			total += older.get(i) + newer.get(i);
		}
		if (total < MIN_SAMPLES) {
			return null;
		}
		long rank = (long) Math.ceil(percent / 100.0 * total);
		long seen = 0;
		for (int i = 0; i < buckets; i++) {
			seen += older.get(i) + newer.get(i);
			if (seen >= rank) {
				return Duration.ofNanos(upperEdge(i));
			}
		}
		return Duration.ofNanos(upperEdge(buckets - 1));
	}

	static int bucket(long nanos) {
		long micros = Math.max(SUB_BUCKETS, nanos / 1000);
		int octave = 63 - Long.numberOfLeadingZeros(micros);
		if (octave - 3 >= OCTAVES) {
			return OCTAVES * SUB_BUCKETS - 1;
		}
		int sub = (int) ((micros >> (octave - 3)) & (SUB_BUCKETS - 1));
		return (octave - 3) * SUB_BUCKETS + sub;
	}

	static long upperEdge(int bucket) {
		int octave = bucket / SUB_BUCKETS + 3;
		int sub = bucket % SUB_BUCKETS;
		return ((long) (SUB_BUCKETS + sub + 1) << (octave - 3)) * 1000;
	}

}
