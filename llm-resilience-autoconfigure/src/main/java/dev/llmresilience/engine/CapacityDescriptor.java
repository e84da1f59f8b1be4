package dev.llmresilience.engine;

import java.time.Instant;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

/**
 * An endpoint's known capacity and retry budget in {@code /actuator/llmbreakers}: for requests and
 * tokens, the limit known now, what is left, when it is whole again and where it is known from,
 * {@code null} when nothing is known; the calls routed away before a 429; the retry budget.
 * Counted per replica.
 *
 * @param requests the request limit, or {@code null}
 * @param tokens the token limit, or {@code null}
 * @param routedAway calls not sent because the known limit could not take them, since start-up
 * @param retryBudget the retry budget over the last minute
 */
record CapacityDescriptor(@Nullable Window requests, @Nullable Window tokens, long routedAway, Budget retryBudget) {

	static CapacityDescriptor of(LlmEndpoint endpoint) {
		long now = Schedulers.parallel().now(TimeUnit.NANOSECONDS);
		EndpointCapacity capacity = endpoint.capacity();
		RetryBudget.State budget = endpoint.retryBudget().state(now);
		return new CapacityDescriptor(Window.of(capacity.known(EndpointCapacity.Dimension.REQUESTS, now)),
				Window.of(capacity.known(EndpointCapacity.Dimension.TOKENS, now)), endpoint.routedAwayCount(),
				new Budget(budget.percent(), budget.minPerSecond(), budget.calls(), budget.retries(), budget.left(),
						budget.refused()));
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

}
