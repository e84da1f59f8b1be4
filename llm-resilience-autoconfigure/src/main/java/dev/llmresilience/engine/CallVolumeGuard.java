package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmresilience.spi.SharedState.CallCounter;
import org.jspecify.annotations.Nullable;

/**
 * A runaway-loop guard: at most {@code max-calls-per-hour} upstream attempts, over all endpoints,
 * in each window. A refused attempt makes no call. By default it counts this instance's calls in a
 * fixed window that starts when the application starts (see {@link LocalCallCounter}); given a
 * shared {@link CallCounter} it counts the whole fleet's.
 */
final class CallVolumeGuard {

	private final int maxCalls;

	private final @Nullable CallCounter counter;

	private final AtomicBoolean tripped = new AtomicBoolean();

	private final AtomicLong trips = new AtomicLong();

	/**
	 * Create a guard that counts this instance's calls.
	 * @param maxCalls calls allowed per window; 0 switches the guard off
	 * @param window the window's length
	 */
	public CallVolumeGuard(int maxCalls, Duration window) {
		this(maxCalls, (maxCalls > 0) ? new LocalCallCounter(maxCalls, window) : null);
	}

	/**
	 * Create a guard over a counter.
	 * @param maxCalls calls allowed per window, as the counter enforces them; 0 switches the guard off
	 * @param counter the counter, or {@code null} when off
	 */
	public CallVolumeGuard(int maxCalls, @Nullable CallCounter counter) {
		this.maxCalls = maxCalls;
		this.counter = (maxCalls > 0) ? counter : null;
	}

	/**
	 * A guard that allows everything.
	 * @return the guard
	 */
	public static CallVolumeGuard off() {
		return new CallVolumeGuard(0, Duration.ofHours(1));
	}

	/**
	 * Take one permit for an upstream attempt. Decided locally: never waits.
	 * @return true if the attempt may go ahead
	 */
	public boolean tryAcquire() {
		if (this.counter == null) {
			return true;
		}
		boolean permitted = this.counter.tryAcquire();
		if (!permitted && this.tripped.compareAndSet(false, true)) {
			this.trips.incrementAndGet();
		}
		else if (permitted) {
			this.tripped.set(false);
		}
		return permitted;
	}

	/**
	 * The configured limit.
	 * @return calls per window, 0 when off
	 */
	public int maxCalls() {
		return this.maxCalls;
	}

	/**
	 * Attempts made in the current window.
	 * @return the count
	 */
	public int callsThisWindow() {
		return (this.counter != null) ? this.counter.callsThisWindow() : 0;
	}

	/**
	 * Whether the current window is spent.
	 * @return true if attempts are being refused
	 */
	public boolean isTripped() {
		return this.counter != null && this.counter.isExhausted();
	}

	/**
	 * How many times the guard has started refusing attempts.
	 * @return the count of trips
	 */
	public long trips() {
		return this.trips.get();
	}

}
