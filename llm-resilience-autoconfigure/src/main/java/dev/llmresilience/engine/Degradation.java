package dev.llmresilience.engine;

import java.time.Clock;

import dev.llmresilience.spi.FallbackCache;
import dev.llmresilience.spi.RouteSelector;
import org.jspecify.annotations.Nullable;

/**
 * What the gateway degrades with, and the guards over all endpoints.
 *
 * @param routeSelector picks the route of a request that names none
 * @param cache the last-good-answer cache, or {@code null} when off
 * @param deferred the deferred queue, or {@code null} when deferral is off
 * @param guard the call-volume guard
 * @param budget the daily budget
 * @param clock the clock that ages cached answers
 * @param limit the limit on gateway calls in flight
 */
record Degradation(RouteSelector routeSelector, @Nullable FallbackCache cache, @Nullable DeferredQueue deferred,
		CallVolumeGuard guard, BudgetGuard budget, Clock clock, ConcurrencyLimit limit) {

	/**
	 * Degradation with no limit on calls in flight.
	 * @param routeSelector picks the route of a request that names none
	 * @param cache the last-good-answer cache, or {@code null} when off
	 * @param deferred the deferred queue, or {@code null} when deferral is off
	 * @param guard the call-volume guard
	 * @param budget the daily budget
	 * @param clock the clock that ages cached answers
	 */
	public Degradation(RouteSelector routeSelector, @Nullable FallbackCache cache, @Nullable DeferredQueue deferred,
			CallVolumeGuard guard, BudgetGuard budget, Clock clock) {
		this(routeSelector, cache, deferred, guard, budget, clock, ConcurrencyLimit.off());
	}

	/**
	 * No cache, no deferral, no guard, no budget, no limit: route walk, then BUSY.
	 * @return the degradation
	 */
	public static Degradation none() {
		Clock clock = Clock.systemUTC();
		return new Degradation(RouteSelector.DEFAULT, null, null, CallVolumeGuard.off(), BudgetGuard.off(clock), clock);
	}

}
