package dev.llmresilience.engine;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

import io.github.resilience4j.bulkhead.Bulkhead;
import org.jspecify.annotations.Nullable;

/**
 * How much of one endpoint batch calls may use ({@code llm.gateway.batch-share}, docs/capacity.md):
 * of its known request rate limit, the share of each window, a batch call being refused once what
 * is left of the window is down to the interactive calls' reserve; without a known request limit,
 * the share of its bulkhead's calls in flight. Interactive calls are never counted here. Counted
 * per replica.
 */
final class BatchShare {

	/** {@code llm.gateway.batch-share}'s default: half of an endpoint. */
	static final double DEFAULT_SHARE = 0.5;

	private final double share;

	private final AtomicInteger inFlight = new AtomicInteger();

	private final LongAdder refused = new LongAdder();

	/**
	 * Create an endpoint's batch share.
	 * @param share the part of the endpoint's capacity batch calls may use, in (0, 1]
	 */
	BatchShare(double share) {
		if (!(share > 0 && share <= 1)) {
			throw new IllegalArgumentException("A batch share must be in (0, 1], was " + share);
		}
		this.share = share;
	}

	/**
	 * Take a batch call, if the endpoint's share lets it through; a call taken is counted in flight
	 * until {@link #release()}.
	 * @param capacity what is known of the provider's rate limits
	 * @param bulkhead the endpoint's bulkhead
	 * @param now the scheduler's time
	 * @return {@code null} when taken, else the limit that refused it
	 */
	@Nullable Limit take(EndpointCapacity capacity, Bulkhead bulkhead, long now) {
		Limit limit = limit(capacity, bulkhead, now);
		if (limit.basis() == Basis.RATE_LIMIT) {
			// the window's last requests are the interactive calls' reserve: never taken by batch work
			if (limit.remaining() <= limit.reserve()) {
				this.refused.increment();
				return limit;
			}
			this.inFlight.incrementAndGet();
			return null;
		}
		int current;
		do {
			current = this.inFlight.get();
			if (current >= limit.calls()) {
				this.refused.increment();
				return limit;
			}
		}
		while (!this.inFlight.compareAndSet(current, current + 1));
		return null;
	}

	/** A batch call taken by {@link #take} ended, however it ended. */
	void release() {
		this.inFlight.decrementAndGet();
	}

	/**
	 * What limits batch calls on the endpoint now.
	 * @param capacity what is known of the provider's rate limits
	 * @param bulkhead the endpoint's bulkhead
	 * @param now the scheduler's time
	 * @return the limit
	 */
	Limit limit(EndpointCapacity capacity, Bulkhead bulkhead, long now) {
		EndpointCapacity.Known requests = capacity.known(EndpointCapacity.Dimension.REQUESTS, now);
		if (requests != null && requests.limit() != null && requests.limit() > 0) {
			long window = requests.limit();
			long batch = (long) Math.floor(this.share * window);
			return new Limit(Basis.RATE_LIMIT, batch, window - batch, requests.remaining());
		}
		int max = bulkhead.getBulkheadConfig().getMaxConcurrentCalls();
		return new Limit(Basis.BULKHEAD, (long) Math.floor(this.share * max), 0, 0);
	}

	double share() {
		return this.share;
	}

	int inFlight() {
		return this.inFlight.get();
	}

	long refused() {
		return this.refused.sum();
	}

	/** What a batch call's share is a share of. */
	enum Basis {

		/** The provider's known request rate limit (configured or learned). */
		RATE_LIMIT,
		/** The endpoint's bulkhead ({@code bulkhead.max-concurrent-calls}), no request limit being known. */
		BULKHEAD

	}

	/**
	 * The limit on batch calls now.
	 * @param basis what it is a share of
	 * @param calls the batch calls it allows: of a whole window for {@link Basis#RATE_LIMIT}, in
	 * flight at once for {@link Basis#BULKHEAD}
	 * @param reserve the requests of the window kept for interactive calls ({@link Basis#RATE_LIMIT})
	 * @param remaining what is left of the window now ({@link Basis#RATE_LIMIT})
	 */
	record Limit(Basis basis, long calls, long reserve, long remaining) {

	}

}
