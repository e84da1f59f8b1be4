package dev.llmresilience.engine;

import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * Calls and the extra attempts they brought (retries, hedges) over a sliding window, in slots of a
 * fixed length: what a retry or hedge budget is a share of. A count takes no lock, since every call
 * comes here: each slot is a pair of {@link LongAdder}s stamped with its slot of time, replaced by
 * compare-and-set once that time has passed. A slot older than the window is no longer read.
 */
final class SlidingCounts {

	private final long slotNanos;

	private final int slots;

	private final AtomicReferenceArray<Slot> counts;

	/**
	 * @param windowNanos the window
	 * @param slots how many slots it is counted in
	 */
	SlidingCounts(long windowNanos, int slots) {
		this.slots = slots;
		this.slotNanos = Math.max(1, windowNanos / slots);
		this.counts = new AtomicReferenceArray<>(slots);
	}

	/** Count a call. */
	void call(long now) {
		slot(now).calls.increment();
	}

	/** Count an extra attempt. */
	void extra(long now) {
		slot(now).extras.increment();
	}

	/**
	 * The counts of the window that ends now.
	 * @param now the scheduler's time
	 * @return its calls and extra attempts
	 */
	Window window(long now) {
		long current = Math.floorDiv(now, this.slotNanos);
		long calls = 0;
		long extras = 0;
		for (int i = 0; i < this.slots; i++) {
			Slot slot = this.counts.get(i);
			if (slot != null && current - slot.time < this.slots) {
				calls += slot.calls.sum();
				extras += slot.extras.sum();
			}
		}
		return new Window(calls, extras);
	}

	// The counts of this slot of time, in the slot that held an older one until now (a count a whole
	// window late goes to the newer slot there, never replacing it).
	private Slot slot(long now) {
		long current = Math.floorDiv(now, this.slotNanos);
		int index = (int) Math.floorMod(current, (long) this.slots);
		while (true) {
			Slot slot = this.counts.get(index);
			if (slot != null && slot.time >= current) {
				return slot;
			}
			Slot fresh = new Slot(current);
			if (this.counts.compareAndSet(index, slot, fresh)) {
				return fresh;
			}
		}
	}

	/**
	 * @param calls the calls in the window
	 * @param extras the extra attempts in the window
	 */
	record Window(long calls, long extras) {

	}

	private static final class Slot {

		private final long time;

		private final LongAdder calls = new LongAdder();

		private final LongAdder extras = new LongAdder();

		private Slot(long time) {
			this.time = time;
		}

	}

}
