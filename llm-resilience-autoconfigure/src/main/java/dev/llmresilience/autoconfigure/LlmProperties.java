package dev.llmresilience.autoconfigure;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.util.StringUtils;

/**
 * Configuration of llm-resilience, under {@code llm}.
 */
@ConfigurationProperties("llm")
public class LlmProperties {

	/** Whether the starter configures a gateway at all. */
	private boolean enabled = true;

	/** Resilience settings applied to every endpoint that does not set them itself. */
	@NestedConfigurationProperty
	private final ResilienceProperties defaults = new ResilienceProperties();

	/** The model endpoints, by name. Each is one circuit-breaker bucket. */
	private Map<String, EndpointProperties> endpoints = new LinkedHashMap<>();

	/**
	 * Named routes, each a list of endpoints tried in order (llm.routes.cheap=a,b), or an object:
	 * llm.routes.<name>.endpoints (the list; omitted, every enabled endpoint by priority),
	 * llm.routes.<name>.balance (priority, weighted or least-latency: which endpoint of equal
	 * priority goes first; default priority) and llm.routes.<name>.order (priority or
	 * cheapest-first; default priority). Without a "default" route, "default" holds every enabled
	 * endpoint by priority.
	 */
	private Map<String, Route> routes = new LinkedHashMap<>();

	/** How a gateway call degrades. */
	@NestedConfigurationProperty
	private final GatewayProperties gateway = new GatewayProperties();

	/** The "llm" health contributor. */
	@NestedConfigurationProperty
	private final Health health = new Health();

	/** How degraded each route's answers have been: a meter, health details and a WARN. */
	@NestedConfigurationProperty
	private final Degradation degradation = new Degradation();

	/** The live dashboard at /llm/dashboard. */
	@NestedConfigurationProperty
	private final Dashboard dashboard = new Dashboard();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public ResilienceProperties getDefaults() {
		return this.defaults;
	}

	public Map<String, EndpointProperties> getEndpoints() {
		return this.endpoints;
	}

	public void setEndpoints(Map<String, EndpointProperties> endpoints) {
		this.endpoints = endpoints;
	}

	public Map<String, Route> getRoutes() {
		return this.routes;
	}

	public void setRoutes(Map<String, Route> routes) {
		this.routes = routes;
	}

	public GatewayProperties getGateway() {
		return this.gateway;
	}

	public Health getHealth() {
		return this.health;
	}

	public Degradation getDegradation() {
		return this.degradation;
	}

	public Dashboard getDashboard() {
		return this.dashboard;
	}

	/**
	 * Settings of the "llm" health contributor, {@code llm.health}.
	 */
	public static class Health {

		/**
		 * Report DOWN while every endpoint of some route has an open breaker. Off by default: a
		 * provider outage should not take every replica out of the load balancer at once.
		 */
		private boolean downWhenRouteUnavailable = false;

		public boolean isDownWhenRouteUnavailable() {
			return this.downWhenRouteUnavailable;
		}

		public void setDownWhenRouteUnavailable(boolean downWhenRouteUnavailable) {
			this.downWhenRouteUnavailable = downWhenRouteUnavailable;
		}

	}

	/**
	 * The live dashboard, under {@code llm.dashboard}: one self-contained page at
	 * {@code GET /llm/dashboard} that refreshes itself from {@code /actuator/llmbreakers}.
	 */
	public static class Dashboard {

		/** Whether GET /llm/dashboard serves the dashboard page. It needs /actuator/llmbreakers exposed over HTTP. */
		private boolean enabled = false;

		/** How often the page reloads /actuator/llmbreakers, from 500ms to 1m. */
		private Duration refresh = Duration.ofSeconds(2);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getRefresh() {
			return this.refresh;
		}

		public void setRefresh(Duration refresh) {
			this.refresh = refresh;
		}

	}

	/**
	 * How silent degradation is made visible, under {@code llm.degradation}: the per-route share of
	 * degraded answers (meter {@code llm.gateway.degraded.share}, the {@code llm} health details,
	 * {@code /actuator/llmbreakers}), and a WARN when a route answers only degraded for too long.
	 */
	public static class Degradation {

		/** The time over which each route's share of degraded answers is computed, in whole seconds from 1s to 1h. */
		private Duration window = Duration.ofMinutes(5);

		/**
		 * How long a route may answer only degraded (FALLBACK, CACHED, DEFERRED or BUSY, no PRIMARY
		 * answer in between) before a WARN says so; 0 switches the WARN off.
		 */
		private Duration warnAfter = Duration.ofMinutes(2);

		public Duration getWindow() {
			return this.window;
		}

		public void setWindow(Duration window) {
			this.window = window;
		}

		public Duration getWarnAfter() {
			return this.warnAfter;
		}

		public void setWarnAfter(Duration warnAfter) {
			this.warnAfter = warnAfter;
		}

	}

	/**
	 * One route, {@code llm.routes.<name>}, in its object form ({@code endpoints}, {@code balance},
	 * {@code order}) or its list form ({@code llm.routes.<name>=a,b} or a YAML list: the endpoints in
	 * order, tried strictly by priority).
	 */
	public static class Route {

		/**
		 * The endpoints the route tries, in order. Omitted, every enabled endpoint, by priority then
		 * name, as the implicit default route.
		 */
		private @Nullable List<String> endpoints;

		/**
		 * How the route chooses which of its endpoints of equal priority (equal price with
		 * order=cheapest-first) to try first: "priority" (the route's order), "weighted" (at random, in
		 * proportion to each endpoint's weight) or "least-latency" (the lower peak-EWMA time to first
		 * token of two drawn at random). The others follow in the route's order. Default priority.
		 */
		private String balance = "priority";

		/**
		 * The route's order: "priority" (as listed; endpoints of equal priority form a group) or
		 * "cheapest-first" (by input plus output price per million tokens, unpriced endpoints last;
		 * endpoints of equal price form a group). Default priority.
		 */
		private String order = "priority";

		private boolean listForm;

		public Route() {
		}

		/**
		 * A route in its list form, as Boot converts {@code llm.routes.<name>=a,b}.
		 * @param endpoints the endpoints' names, separated by commas
		 */
		public Route(String endpoints) {
			this.endpoints = Arrays.stream(StringUtils.commaDelimitedListToStringArray(endpoints))
				.map(String::trim)
				.filter((name) -> !name.isEmpty())
				.toList();
			this.listForm = true;
		}

		private Route(List<String> endpoints) {
			this.endpoints = List.copyOf(endpoints);
			this.listForm = true;
		}

		/**
		 * A route in its list form, as the wiring reads {@code llm.routes.<name>[0]=a} (not named
		 * {@code of} or {@code from}, so that Boot's conversion does not take it for a converter).
		 * @param endpoints the endpoints' names
		 * @return the route
		 */
		public static Route listed(List<String> endpoints) {
			return new Route(endpoints);
		}

		public @Nullable List<String> getEndpoints() {
			return this.endpoints;
		}

		public void setEndpoints(@Nullable List<String> endpoints) {
			this.endpoints = endpoints;
		}

		public String getBalance() {
			return this.balance;
		}

		public void setBalance(String balance) {
			this.balance = balance;
		}

		public String getOrder() {
			return this.order;
		}

		public void setOrder(String order) {
			this.order = order;
		}

		/**
		 * Whether the route was written as a plain list of endpoint names: its errors then name
		 * {@code llm.routes.<name>} itself.
		 * @return whether it is in list form
		 */
		public boolean listForm() {
			return this.listForm;
		}

	}

}
