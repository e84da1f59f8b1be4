package dev.llmresilience.engine;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import org.jspecify.annotations.Nullable;

/**
 * One route's hedging in {@code /actuator/llmbreakers}: how it hedges, its budget now, and what its
 * hedges came to since start-up. The policy's and the counts' fields are written beside
 * {@code delay}, flat, as one object.
 *
 * @param delay {@code adaptive} (with its percentile) or {@code fixed}
 * @param policy how the route hedges
 * @param counts what its hedges came to
 * @param bySize with {@code by-prompt-size} (and an adaptive delay), for each endpoint of the route
 * the delay of each prompt size it has seen calls of; else {@code null}
 */
record HedgeDescriptor(String delay, @JsonUnwrapped Policy policy, @JsonUnwrapped Counts counts,
		@JsonInclude(JsonInclude.Include.NON_NULL) @Nullable Map<String, Map<String, HedgePolicy.SizeDelay>> bySize) {

	static Map<String, HedgeDescriptor> of(Hedging hedging, EndpointRegistry endpoints) {
		Map<String, HedgeDescriptor> hedges = new LinkedHashMap<>();
		hedging.report().forEach((route, report) -> {
			HedgePolicy policy = hedging.route(route);
			List<LlmEndpoint> members = endpoints.route(route);
			Map<String, Map<String, HedgePolicy.SizeDelay>> bySize = null;
			if (policy != null && members != null && report.settings().adaptive() && report.settings().byPromptSize()) {
				bySize = new LinkedHashMap<>();
				for (LlmEndpoint member : members) {
					bySize.put(member.name(), policy.sizeDelays(member));
				}
			}
			hedges.put(route, of(report, bySize));
		});
		return hedges;
	}

	static HedgeDescriptor of(HedgeReport report,
			@JsonInclude(JsonInclude.Include.NON_NULL) @Nullable Map<String, Map<String, HedgePolicy.SizeDelay>> bySize) {
		HedgeSettings settings = report.settings();
		return new HedgeDescriptor(settings.adaptive() ? "adaptive" : "fixed",
				new Policy(settings.percentile(), settings.delay(), settings.minDelay(), settings.maxRatio(),
						settings.window(), settings.byPromptSize()),
				new Counts(report.callsInWindow(), report.hedgesInWindow(), report.hedgeWon(), report.firstWon(),
						report.noWinner(), report.refused()),
				bySize);
	}

	/**
	 * How a route hedges.
	 *
	 * @param percentile the percentile an adaptive delay waits for
	 * @param fixedDelay the fixed delay (an adaptive delay's until enough first-token times)
	 * @param minDelay the shortest adaptive delay
	 * @param maxRatio the most hedged calls as a share of the route's calls in the window
	 * @param window the budget's sliding window
	 * @param byPromptSize whether an adaptive delay is learned per prompt size too
	 */
	record Policy(double percentile, Duration fixedDelay, Duration minDelay, double maxRatio, Duration window,
			boolean byPromptSize) {
	}

	/**
	 * What a route's hedges came to.
	 *
	 * @param callsInWindow the route's calls in the window
	 * @param hedgesInWindow hedged calls in the window
	 * @param hedgeWon hedges the hedge's endpoint won
	 * @param firstWon hedges the endpoint tried first won
	 * @param noWinner hedges where both endpoints failed
	 * @param refused hedges the budget refused
	 */
	record Counts(long callsInWindow, long hedgesInWindow, long hedgeWon, long firstWon, long noWinner,
			long refused) {
	}

}
