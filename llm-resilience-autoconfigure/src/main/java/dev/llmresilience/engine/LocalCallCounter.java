package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.spi.SharedState.CallCounter;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;

/**
 * This instance's calls, in a Resilience4j {@link RateLimiter}: the window is <b>fixed</b>, starts
 * when the application starts and renews every period, when all its permits come back at once.
 */
final class LocalCallCounter implements CallCounter {

	private final int maxCalls;

	private final RateLimiter limiter;

	LocalCallCounter(int maxCalls, Duration window) {
		this.maxCalls = maxCalls;
		this.limiter = RateLimiter.of("llm-call-volume-guard", RateLimiterConfig.custom()
			.limitForPeriod(maxCalls)
			.limitRefreshPeriod(window)
			.timeoutDuration(Duration.ZERO)
			.build());
	}

	@Override
	public boolean tryAcquire() {
		return this.limiter.acquirePermission();
	}

	@Override
	public int callsThisWindow() {
		return this.maxCalls - Math.max(0, this.limiter.getMetrics().getAvailablePermissions());
	}

	@Override
	public boolean isExhausted() {
		return this.limiter.getMetrics().getAvailablePermissions() <= 0;
	}

}
