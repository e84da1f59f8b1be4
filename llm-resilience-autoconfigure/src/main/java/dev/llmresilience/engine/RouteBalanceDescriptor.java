package dev.llmresilience.engine;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * One route's balancing in {@code /actuator/llmbreakers}: its strategy, and the calls each of its
 * endpoints was chosen to go first for.
 *
 * @param balance {@code priority}, {@code weighted} or {@code least-latency}
 * @param order {@code priority} or {@code cheapest-first}
 * @param calls the route's calls so far
 * @param endpoints its endpoints by name, in the route's order
 */
record RouteBalanceDescriptor(String balance, String order, long calls, Map<String, ShareDescriptor> endpoints) {

	static Map<String, RouteBalanceDescriptor> of(Map<String, RouteReport> reports) {
		Map<String, RouteBalanceDescriptor> routes = new LinkedHashMap<>();
		reports.forEach((route, report) -> routes.put(route, of(report)));
		return routes;
	}

	static RouteBalanceDescriptor of(RouteReport report) {
		long calls = report.calls();
		Map<String, ShareDescriptor> endpoints = new LinkedHashMap<>();
		report.endpoints()
			.forEach((member) -> endpoints.put(member.endpoint(), new ShareDescriptor(member.weight(), member.chosen(),
					member.share(calls), (member.latency() != null) ? member.latency().toNanos() / 1e6 : null)));
		return new RouteBalanceDescriptor(report.strategy().balance().value(), report.strategy().order().value(), calls,
				endpoints);
	}

	/**
	 * One endpoint of the route.
	 *
	 * @param weight its weight
	 * @param chosen the calls it was tried first for
	 * @param share {@code chosen} over the route's calls, 0 to 1
	 * @param latencyMillis its peak-EWMA time to first token now, in milliseconds, on a
	 * {@code least-latency} route; else {@code null}
	 */
	public record ShareDescriptor(double weight, long chosen, double share, @Nullable Double latencyMillis) {
	}

}
