package dev.llmresilience.engine;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * How degraded one route's answers have been, as {@code /actuator/llmbreakers} and the {@code llm}
 * health contributor show it.
 *
 * @param answers answers in the window
 * @param degraded degraded answers in the window (any tier but PRIMARY)
 * @param degradedShare {@code degraded / answers}, from 0 to 1; {@code null} with no answer in the window
 * @param onlyDegradedSince when the current run of only degraded answers began (ISO-8601), or {@code null}
 * @param onlyDegradedForSeconds how long that run has lasted, 0 when there is none
 * @param warned whether the run has lasted past {@code llm.degradation.warn-after}
 * @param onlyDegradedTiers the run's answers by tier
 */
record RouteDegradationDescriptor(int answers, int degraded, @Nullable Double degradedShare,
		@Nullable String onlyDegradedSince, double onlyDegradedForSeconds, boolean warned,
		Map<String, Long> onlyDegradedTiers) {

	static Map<String, RouteDegradationDescriptor> of(@Nullable DegradationWatch watch) {
		Map<String, RouteDegradationDescriptor> routes = new LinkedHashMap<>();
		if (watch != null) {
			watch.routes().forEach((route, state) -> routes.put(route, of(state)));
		}
		return routes;
	}

	static RouteDegradationDescriptor of(RouteDegradation route) {
		return new RouteDegradationDescriptor(route.answers(), route.degraded(), route.degradedShare(),
				(route.onlyDegradedSince() != null) ? route.onlyDegradedSince().toString() : null,
				route.onlyDegradedFor().toMillis() / 1000.0, route.warned(), route.onlyDegradedTiers());
	}

}
