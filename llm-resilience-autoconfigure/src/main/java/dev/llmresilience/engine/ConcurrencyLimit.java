package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import org.jspecify.annotations.Nullable;

/**
 * At most {@code max-concurrent-calls} gateway calls in flight at once, over all routes, on top of
 * each endpoint's own bulkhead: a Resilience4j {@link Bulkhead} that never waits, so that a call
 * past the limit is refused at once (and degrades) instead of queueing. A chat call holds its
 * permit while it walks its route; a stream until it ends.
 */
final class ConcurrencyLimit {

	private static final Runnable NO_PERMIT = () -> {
	};

	private final int maxCalls;

	private final @Nullable Bulkhead bulkhead;

	private final LongAdder refused = new LongAdder();

	/**
	 * Create a limit.
	 * @param maxCalls calls in flight at most; 0 switches the limit off
	 */
	public ConcurrencyLimit(int maxCalls) {
		this.maxCalls = Math.max(0, maxCalls);
		this.bulkhead = (maxCalls <= 0) ? null
				: Bulkhead.of("llm-gateway", BulkheadConfig.custom()
					.maxConcurrentCalls(maxCalls)
					.maxWaitDuration(Duration.ZERO)
					.writableStackTraceEnabled(false)
					.build());
	}

	/**
	 * A limit that lets every call in.
	 * @return the limit
	 */
	public static ConcurrencyLimit off() {
		return new ConcurrencyLimit(0);
	}

	/**
	 * Take a permit for a call that gives it back itself (a chat when its walk ends, a stream when it
	 * ends, fails or is cancelled).
	 * @return the permit's release, to run (at least once) when the call ends; {@code null} when
	 * none was free (the refusal is counted)
	 */
	public @Nullable Runnable tryAcquire() {
		Bulkhead bulkhead = this.bulkhead;
		return (bulkhead != null) ? acquire(bulkhead) : NO_PERMIT;
	}

	// a permit's release, called at most once however the call ends; null when none was free
	private @Nullable Runnable acquire(Bulkhead bulkhead) {
		if (!bulkhead.tryAcquirePermission()) {
			this.refused.increment();
			return null;
		}
		AtomicBoolean released = new AtomicBoolean();
		return () -> {
			if (released.compareAndSet(false, true)) {
				bulkhead.onComplete();
			}
		};
	}

	/**
	 * The configured limit.
	 * @return calls in flight at most, 0 when off
	 */
	public int maxCalls() {
		return this.maxCalls;
	}

	/**
	 * The calls in flight now.
	 * @return the count; 0 when the limit is off (nothing is counted then)
	 */
	public int inFlight() {
		return (this.bulkhead != null) ? this.maxCalls - this.bulkhead.getMetrics().getAvailableConcurrentCalls() : 0;
	}

	/**
	 * The calls refused so far.
	 * @return the count
	 */
	public long refused() {
		return this.refused.sum();
	}

}
