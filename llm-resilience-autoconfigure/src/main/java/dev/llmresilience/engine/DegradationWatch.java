package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmUnavailableException;
import dev.llmresilience.gateway.LlmGatewayListener;
import io.github.resilience4j.core.metrics.Metrics;
import io.github.resilience4j.core.metrics.SlidingTimeWindowMetrics;
import io.github.resilience4j.core.metrics.Snapshot;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Makes silent degradation visible: for each route, the share of degraded answers (every tier but
 * PRIMARY, and an {@link LlmUnavailableException} with {@code busy-as-error}) over a sliding time
 * window, and how long the route has answered only degraded. When that lasts longer than
 * {@code warn-after}, one WARN says so (at the first answer past it), and one INFO when the route's
 * first endpoint answers again. A gateway listener, so it sees exactly what callers got.
 */
final class DegradationWatch implements LlmGatewayListener {

	private static final Log logger = LogFactory.getLog(DegradationWatch.class);

	private final EndpointRegistry endpoints;

	private final Duration window;

	private final Duration warnAfter;

	private final Clock clock;

	private final Map<String, RouteWatch> routes;

	/**
	 * Create a watch over every route of the registry.
	 * @param endpoints the endpoints and routes
	 * @param window the time over which the degraded share is computed (whole seconds, at least 1s)
	 * @param warnAfter how long a route may answer only degraded before the WARN; zero for none
	 * @param clock the clock
	 */
	public DegradationWatch(EndpointRegistry endpoints, Duration window, Duration warnAfter, Clock clock) {
		this.endpoints = endpoints;
		this.window = window;
		this.warnAfter = warnAfter;
		this.clock = clock;
		Map<String, RouteWatch> routes = new LinkedHashMap<>();
		int seconds = (int) Math.max(1, window.toSeconds());
		endpoints.routeNames().keySet().forEach((route) -> routes.put(route, new RouteWatch(seconds, clock)));
		this.routes = Collections.unmodifiableMap(routes);
	}

	@Override
	public void onResponse(String route, ChatResponse response) {
		record(route, response.tier());
	}

	@Override
	public void onError(String route, Throwable error) {
		if (error instanceof LlmUnavailableException) {
			record(route, Tier.BUSY);
		}
	}

	private void record(String route, Tier tier) {
		RouteWatch watch = this.routes.get(route);
		if (watch == null) {
			return;
		}
		Instant now = this.clock.instant();
		watch.metrics.record(0, TimeUnit.NANOSECONDS, (tier == Tier.PRIMARY) ? Metrics.Outcome.SUCCESS : Metrics.Outcome.ERROR);
		String message = null;
		boolean warn = false;
		synchronized (watch) {
			if (tier == Tier.PRIMARY) {
				if (watch.warned && watch.since != null) {
					message = "LLM route '" + route + "' answers from its first endpoint again, after "
							+ text(Duration.between(watch.since, now)) + " of degraded answers (" + counts(watch.tiers) + ")";
				}
				watch.since = null;
				watch.warned = false;
				watch.tiers.clear();
			}
			else {
				if (watch.since == null) {
					watch.since = now;
				}
				watch.tiers.merge(tier, 1L, Long::sum);
				Duration degraded = Duration.between(watch.since, now);
				if (!watch.warned && !this.warnAfter.isZero() && degraded.compareTo(this.warnAfter) >= 0) {
					watch.warned = true;
					warn = true;
					message = "LLM route '" + route + "' has answered only degraded for " + text(degraded) + " ("
							+ counts(watch.tiers) + ")" + firstEndpoint(route, watch.since) + "; llm.degradation.warn-after is "
							+ text(this.warnAfter);
				}
			}
		}
		if (message != null) {
			if (warn) {
				logger.warn(message);
			}
			else {
				logger.info(message);
			}
		}
	}

	private String firstEndpoint(String route, Instant since) {
		List<LlmEndpoint> members = this.endpoints.route(route);
		if (members == null || members.isEmpty()) {
			return "";
		}
		LlmEndpoint first = members.get(0);
		return ": its first endpoint '" + first.name() + "' has not answered since " + since + " (its breaker is "
				+ first.circuitBreaker().getState() + ")";
	}

	/**
	 * The state of one route.
	 * @param route the route's name
	 * @return its state, or {@code null} for an unknown route
	 */
	public @Nullable RouteDegradation route(String route) {
		RouteWatch watch = this.routes.get(route);
		if (watch == null) {
			return null;
		}
		Snapshot snapshot = watch.metrics.getSnapshot();
		int answers = snapshot.getTotalNumberOfCalls();
		int degraded = snapshot.getNumberOfFailedCalls();
		synchronized (watch) {
			Instant since = watch.since;
			return new RouteDegradation(answers, degraded, (answers > 0) ? (double) degraded / answers : null, since,
					(since != null) ? Duration.between(since, this.clock.instant()) : Duration.ZERO, watch.warned,
					Map.copyOf(watch.tiers.entrySet()
						.stream()
						.collect(Collectors.toMap((entry) -> entry.getKey().name(), Map.Entry::getValue))));
		}
	}

	/**
	 * The state of every route, in the order they are configured.
	 * @return the states by route
	 */
	public Map<String, RouteDegradation> routes() {
		Map<String, RouteDegradation> all = new LinkedHashMap<>();
		this.routes.keySet().forEach((route) -> all.put(route, route(route)));
		return all;
	}

	/**
	 * The time the degraded share is computed over.
	 * @return the window
	 */
	public Duration window() {
		return this.window;
	}

	private static String counts(Map<Tier, Long> tiers) {
		return tiers.entrySet().stream().map((entry) -> entry.getKey() + " " + entry.getValue()).collect(Collectors.joining(", "));
	}

	private static String text(Duration duration) {
		long seconds = duration.toSeconds();
		if (seconds < 1) {
			return duration.toMillis() + "ms";
		}
		return (seconds >= 60) ? (seconds / 60) + "m" + ((seconds % 60 != 0) ? " " + (seconds % 60) + "s" : "")
				: seconds + "s";
	}

	/** One route's sliding window and its current run of degraded answers. */
	private static final class RouteWatch {

		private final SlidingTimeWindowMetrics metrics;

		private final Map<Tier, Long> tiers = new EnumMap<>(Tier.class);

		private @Nullable Instant since;

		private boolean warned;

		RouteWatch(int seconds, Clock clock) {
			this.metrics = new SlidingTimeWindowMetrics(seconds, clock);
		}

	}

}
