package dev.llmresilience.engine;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * Which routes hedge their requests, and how ({@code llm.gateway.hedge}, and per route
 * {@code llm.gateway.hedge.routes.<route>}); off unless switched on. See docs/hedging.md.
 */
final class Hedging {

	private final Map<String, HedgePolicy> routes = new LinkedHashMap<>();

	/**
	 * Create the hedging of a gateway's routes.
	 * @param defaults the settings of every route without its own
	 * @param own the routes' own settings, by route
	 * @param routes every route's name
	 */
	public Hedging(HedgeSettings defaults, Map<String, HedgeSettings> own, Collection<String> routes) {
		for (String route : routes) {
			HedgeSettings settings = own.getOrDefault(route, defaults);
			if (settings.enabled()) {
				this.routes.put(route, new HedgePolicy(route, settings));
			}
		}
	}

	/**
	 * No route hedges.
	 * @return the hedging
	 */
	public static Hedging off() {
		return new Hedging(HedgeSettings.DEFAULTS, Map.of(), java.util.List.of());
	}

	@Nullable HedgePolicy route(String route) {
		return this.routes.isEmpty() ? null : this.routes.get(route);
	}

	/**
	 * What each hedging route's hedges have come to.
	 * @return the report of every route that hedges, by route
	 */
	public Map<String, HedgeReport> report() {
		Map<String, HedgeReport> report = new LinkedHashMap<>();
		this.routes.forEach((route, policy) -> report.put(route, policy.report()));
		return report;
	}

}
