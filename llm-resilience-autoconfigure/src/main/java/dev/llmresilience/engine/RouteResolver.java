package dev.llmresilience.engine;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.gateway.EndpointSettings;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Turns {@code llm.routes} (both forms, see {@link RouteForms}) and the endpoints' weights into
 * validated routes and strategies. Every rejected value raises an {@link LlmConfigurationException}
 * naming the property where it was set.
 */
final class RouteResolver {

	private static final Log logger = LogFactory.getLog(RouteResolver.class);

	private final LlmProperties properties;

	private final Map<String, LlmProperties.Route> routes;

	/** Where a property was set ({@code " (set in ...)"}), or empty. */
	private final Function<String, String> origin;

	RouteResolver(LlmProperties properties, Map<String, LlmProperties.Route> routes) {
		this(properties, routes, (property) -> "");
	}

	RouteResolver(LlmProperties properties, Map<String, LlmProperties.Route> routes,
			Function<String, String> origin) {
		this.properties = properties;
		this.routes = routes;
		this.origin = origin;
	}

	// where the element was set (a YAML list), else the property (a comma-separated value)
	private String where(String property, int index) {
		String element = this.origin.apply(property + "[" + index + "]");
		return element.isEmpty() ? this.origin.apply(property) : element;
	}

	/**
	 * Whether a route of this name is configured.
	 * @param route the route's name
	 * @return true if {@code llm.routes} names it, in either form
	 */
	boolean configures(String route) {
		return this.routes.containsKey(route);
	}

	/**
	 * The routes over the given endpoints: those configured, plus {@code default} (every enabled
	 * endpoint by priority) unless configured. Disabled endpoints are left out of every route.
	 * @param endpoints the resolved endpoints, in priority order
	 * @return the routes by name
	 */
	Map<String, List<String>> routes(List<EndpointSettings> endpoints) {
		Map<String, EndpointSettings> byName = new LinkedHashMap<>();
		endpoints.forEach((endpoint) -> byName.put(endpoint.name(), endpoint));
		List<String> enabled = endpoints.stream()
			.filter((endpoint) -> endpoint.routing().enabled())
			.map(EndpointSettings::name)
			.toList();
		Map<String, List<String>> routes = new LinkedHashMap<>();
		if (!this.routes.containsKey(EndpointRegistry.DEFAULT_ROUTE)) {
			if (enabled.isEmpty()) {
				throw new LlmConfigurationException("llm.endpoints", "has no enabled endpoint",
						"Set llm.endpoints.<name>.enabled=true on at least one endpoint, or set llm.enabled=false.");
			}
			routes.put(EndpointRegistry.DEFAULT_ROUTE, enabled);
		}
		this.routes.forEach((route, definition) -> {
			List<String> names = definition.getEndpoints();
			String property = definition.listForm() ? property(route) : property(route) + ".endpoints";
			if (names == null) {
				// the object form without endpoints: every enabled endpoint, as the implicit default route
				names = enabled;
				if (names.isEmpty()) {
					throw new LlmConfigurationException("llm.endpoints", "has no enabled endpoint",
							"Set llm.endpoints.<name>.enabled=true on at least one endpoint, or set llm.enabled=false.");
				}
			}
			if (names.isEmpty()) {
				throw new LlmConfigurationException(property, "is empty",
						"List the endpoints the route tries, in order, e.g. " + property + "=" + String.join(",", byName.keySet())
								+ ", or remove the route.");
			}
			List<String> members = new ArrayList<>();
			for (int index = 0; index < names.size(); index++) {
				String name = names.get(index);
				EndpointSettings endpoint = byName.get(name);
				if (endpoint == null) {
					String nearest = UnknownKeys.nearestName(name, byName.keySet());
					throw new LlmConfigurationException(property, "names unknown endpoint '" + name + "'"
							+ where(property, index)
							+ ((nearest != null) ? "; did you mean '" + nearest + "'" : ""),
							((nearest != null) ? "Write " + nearest + ", or use" : "Use") + " one of the configured endpoints "
									+ byName.keySet() + ", or configure it under " + EndpointSettingsResolver.property(name) + ".");
				}
				if (endpoint.routing().enabled()) {
					members.add(name);
				}
			}
			if (members.isEmpty()) {
				throw new LlmConfigurationException(property, "names only disabled endpoints " + names,
						"Enable one of them (llm.endpoints.<name>.enabled=true) or add an enabled endpoint to the route.");
			}
			routes.put(route, List.copyOf(members));
		});
		return routes;
	}

	/**
	 * The strategy of every configured route; a route not named (the implicit default route) keeps
	 * its order.
	 * @param endpoints the resolved endpoints, to warn of cheapest-first routes over unpriced ones
	 * @param routes the resolved routes
	 * @return the strategies by route
	 */
	Map<String, RouteStrategy> strategies(Map<String, EndpointSettings> endpoints, Map<String, List<String>> routes) {
		Map<String, RouteStrategy> strategies = new LinkedHashMap<>();
		this.routes.forEach((route, definition) -> {
			String prefix = property(route) + ".";
			Balance balance = Balance.named(definition.getBalance());
			if (balance == null) {
				throw new LlmConfigurationException(prefix + "balance", "is '" + definition.getBalance()
						+ "', which is not a balancing strategy", "Use priority (the route's order, the default), weighted "
								+ "(by each endpoint's weight) or least-latency (by measured time to first token).");
			}
			RouteOrder order = RouteOrder.named(definition.getOrder());
			if (order == null) {
				throw new LlmConfigurationException(prefix + "order", "is '" + definition.getOrder()
						+ "', which is not a route order", "Use priority (as listed, the default) or cheapest-first (by the "
								+ "endpoints' price.input-per-million plus price.output-per-million).");
			}
			if (order == RouteOrder.CHEAPEST_FIRST) {
				routes.getOrDefault(route, List.of()).stream()
					.filter((name) -> endpoints.containsKey(name) && endpoints.get(name).routing().price() == null)
					.forEach((name) -> logger.warn("Route '" + route + "' is ordered cheapest-first, but endpoint '" + name
							+ "' has no price: it is tried after every priced endpoint. Set "
							+ EndpointSettingsResolver.property(name) + ".price.input-per-million and output-per-million."));
			}
			strategies.put(route, new RouteStrategy(balance, order));
		});
		return strategies;
	}

	/**
	 * Every endpoint's weight.
	 * @return the weights by endpoint
	 */
	Map<String, Double> weights() {
		Map<String, Double> weights = new LinkedHashMap<>();
		this.properties.getEndpoints().forEach((name, endpoint) -> {
			double weight = endpoint.getWeight();
			if (!(weight > 0) || Double.isInfinite(weight)) {
				throw new LlmConfigurationException(EndpointSettingsResolver.property(name) + ".weight",
						"is " + weight + ", but must be a positive number",
						"Give its share of a weighted route relative to the other endpoints', e.g. 3 beside 1 for three "
								+ "calls in four (default 1).");
			}
			weights.put(name, weight);
		});
		return weights;
	}

	// Boot splits an unbracketed map key at its dots, as for endpoints
	static String property(String route) {
		return route.contains(".") ? "llm.routes[" + route + "]" : "llm.routes." + route;
	}

}
