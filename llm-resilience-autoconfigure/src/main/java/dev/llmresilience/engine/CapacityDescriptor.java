package dev.llmresilience.engine;

import java.time.Instant;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

/**
 * An endpoint's known capacity and retry budget in {@code /actuator/llmbreakers}: for requests and
 * tokens, the limit known now, what is left, when it is whole again and where it is known from,
 * {@code null} when nothing is known; the calls routed away before a 429; the retry budget; the
 * batch share. Counted per replica.
 *
 * @param requests the request limit, or {@code null}
 * @param tokens the token limit, or {@code null}
 * @param routedAway calls not sent because the known limit could not take them, since start-up
 * @param retryBudget the retry budget over the last minute
 * @param batch what batch calls use of the endpoint
 */
record CapacityDescriptor(@Nullable Window requests, @Nullable Window tokens, long routedAway, Budget retryBudget,
		Batch batch) {

	static CapacityDescriptor of(LlmEndpoint endpoint) {
		long now = Schedulers.parallel().now(TimeUnit.NANOSECONDS);
		EndpointCapacity capacity = endpoint.capacity();
		RetryBudget.State budget = endpoint.retryBudget().state(now);
		return new CapacityDescriptor(Window.of(capacity.known(EndpointCapacity.Dimension.REQUESTS, now)),
				Window.of(capacity.known(EndpointCapacity.Dimension.TOKENS, now)), endpoint.routedAwayCount(),
				new Budget(budget.percent(), budget.minPerSecond(), budget.calls(), budget.retries(), budget.left(),
						budget.refused()),
				Batch.of(endpoint.batchShare(), endpoint.batchShare().limit(capacity, endpoint.bulkhead(), now)));
	}

	/**
	 * One known limit.
	 *
	 * @param limit the limit, or {@code null} when the provider did not say it
	 * @param remaining what is left now
	 * @param reset when it is whole again, or {@code null} when it is whole now
	 * @param source {@code CONFIGURED} ({@code rate-limits.*}) or {@code LEARNED} (the provider's
	 * headers, or its 429)
	 */
	record Window(@Nullable Long limit, long remaining, @Nullable Instant reset, String source) {

		static @Nullable Window of(EndpointCapacity.@Nullable Known known) {
			return (known != null)
					? new Window(known.limit(), known.remaining(), known.reset(), known.source().name()) : null;
		}

	}

	/**
	 * The retry budget.
	 *
	 * @param percent {@code retry.budget}
	 * @param minPerSecond {@code retry.budget-min-per-second}
	 * @param calls calls over the last minute
	 * @param retries retries over the last minute
	 * @param left retries the budget still has
	 * @param refused retries it refused since start-up
	 */
	record Budget(float percent, long minPerSecond, long calls, long retries, long left, long refused) {

	}

	/**
	 * What batch calls use of the endpoint ({@code llm.gateway.batch-share}).
	 *
	 * @param share {@code llm.gateway.batch-share}
	 * @param basis {@code RATE_LIMIT} (a share of each window of its known request limit) or
	 * {@code BULKHEAD} (a share of its bulkhead's calls in flight, no request limit being known)
	 * @param limit the batch calls allowed: of a whole window for {@code RATE_LIMIT}, in flight at
	 * once for {@code BULKHEAD}
	 * @param inFlight batch calls in flight on the endpoint now
	 * @param refused batch calls not sent because the share was used, since start-up
	 */
	record Batch(double share, String basis, long limit, int inFlight, long refused) {

		static Batch of(BatchShare share, BatchShare.Limit limit) {
			return new Batch(share.share(), limit.basis().name(), limit.calls(), share.inFlight(), share.refused());
		}

	}

}
