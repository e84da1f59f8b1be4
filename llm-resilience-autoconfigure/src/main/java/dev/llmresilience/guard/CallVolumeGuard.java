package dev.llmresilience.guard;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import org.jspecify.annotations.Nullable;

/**
 * A runaway-loop guard: at most {@code max-calls-per-hour} upstream attempts, over all endpoints,
 * in each window. Backed by a Resilience4j {@link RateLimiter}, so the window is <b>fixed</b>: it
 * starts when the application starts and renews every hour, when all its permits come back at
 * once. A refused attempt makes no call.
 */
public final class CallVolumeGuard {

	private final int maxCalls;

	private final @Nullable RateLimiter limiter;

	private final AtomicBoolean tripped = new AtomicBoolean();

	private final AtomicLong trips = new AtomicLong();

	/**
	 * Create a guard.
	 * @param maxCalls calls allowed per window; 0 switches the guard off
	 * @param window the window's length
	 */
	public CallVolumeGuard(int maxCalls, Duration window) {
		this.maxCalls = maxCalls;
		this.limiter = (maxCalls <= 0) ? null
				: RateLimiter.of("llm-call-volume-guard", RateLimiterConfig.custom()
					.limitForPeriod(maxCalls)
					.limitRefreshPeriod(window)
					.timeoutDuration(Duration.ZERO)
					.build());
	}

	/**
	 * A guard that allows everything.
	 * @return the guard
	 */
	public static CallVolumeGuard off() {
		return new CallVolumeGuard(0, Duration.ofHours(1));
	}

	/**
	 * Take one permit for an upstream attempt.
	 * @return true if the attempt may go ahead
	 */
	public boolean tryAcquire() {
		if (this.limiter == null) {
			return true;
		}
		boolean permitted = this.limiter.acquirePermission();
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
		return (this.limiter != null) ? this.maxCalls - Math.max(0, this.limiter.getMetrics().getAvailablePermissions())
				: 0;
	}

	/**
	 * Whether the current window is spent.
	 * @return true if attempts are being refused
	 */
	public boolean isTripped() {
		return this.limiter != null && this.limiter.getMetrics().getAvailablePermissions() <= 0;
	}

	/**
	 * How many times the guard has started refusing attempts.
	 * @return the count of trips
	 */
	public long trips() {
		return this.trips.get();
	}

}
