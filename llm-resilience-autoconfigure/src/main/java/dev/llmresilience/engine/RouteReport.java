package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * What one route's balancing has done so far.
 *
 * @param strategy the route's strategy
 * @param endpoints its endpoints, in the route's order (after {@link RouteOrder})
 */
record RouteReport(RouteStrategy strategy, List<Member> endpoints) {

	public RouteReport {
		endpoints = List.copyOf(endpoints);
	}

	/**
	 * The route's calls so far.
	 * @return the number of calls ordered
	 */
	public long calls() {
		return this.endpoints.stream().mapToLong(Member::chosen).sum();
	}

	/**
	 * One endpoint of the route.
	 *
	 * @param endpoint its name
	 * @param weight its weight (1 unless configured)
	 * @param chosen the calls it was tried first for
	 * @param latency its peak-EWMA time to first token now (decayed since it was last measured), on a
	 * {@link Balance#LEAST_LATENCY} route; else {@code null}
	 */
	public record Member(String endpoint, double weight, long chosen, @Nullable Duration latency) {

		/**
		 * Its share of the route's calls.
		 * @param calls the route's calls
		 * @return {@code chosen / calls}, 0 before any call
		 */
		public double share(long calls) {
			return (calls > 0) ? (double) this.chosen / calls : 0;
		}

	}

}
