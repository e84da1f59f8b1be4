package dev.llmresilience.engine;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

/**
 * Every configured endpoint by name, and the routes: named, ordered lists of endpoints.
 */
public final class EndpointRegistry implements AutoCloseable {

	/** The route used when a request names none. */
	public static final String DEFAULT_ROUTE = "default";

	private final Map<String, LlmEndpoint> endpoints;

	private final Map<String, List<LlmEndpoint>> routes;

	private final List<AutoCloseable> resources;

	/**
	 * Create a registry.
	 * @param endpoints the endpoints, in priority order
	 * @param routes the routes, each an ordered list of endpoint names that exist in {@code endpoints}
	 * @param resources released by {@link #close()} (e.g. connection pools)
	 */
	public EndpointRegistry(List<LlmEndpoint> endpoints, Map<String, List<String>> routes,
			List<? extends AutoCloseable> resources) {
		Map<String, LlmEndpoint> byName = new LinkedHashMap<>();
		endpoints.forEach((endpoint) -> byName.put(endpoint.name(), endpoint));
		this.endpoints = Collections.unmodifiableMap(byName);
		Map<String, List<LlmEndpoint>> resolved = new LinkedHashMap<>();
		routes.forEach((route, names) -> {
			List<LlmEndpoint> members = new ArrayList<>();
			for (String name : names) {
				LlmEndpoint endpoint = byName.get(name);
				if (endpoint == null) {
					throw new IllegalArgumentException("Route '" + route + "' names unknown endpoint '" + name + "'");
				}
				members.add(endpoint);
			}
			resolved.put(route, List.copyOf(members));
		});
		this.routes = Collections.unmodifiableMap(resolved);
		this.resources = List.copyOf(resources);
	}

	/**
	 * An endpoint by name.
	 * @param name the name
	 * @return the endpoint, or {@code null}
	 */
	public @Nullable LlmEndpoint endpoint(String name) {
		return this.endpoints.get(name);
	}

	/**
	 * All endpoints, in priority order.
	 * @return the endpoints
	 */
	public Collection<LlmEndpoint> endpoints() {
		return this.endpoints.values();
	}

	/**
	 * The circuit breaker of every endpoint, each named after its endpoint, in priority order.
	 * @return the breakers
	 */
	public List<CircuitBreaker> circuitBreakers() {
		return this.endpoints.values().stream().map(LlmEndpoint::circuitBreaker).toList();
	}

	/**
	 * A route's endpoints, in the order they are tried.
	 * @param route the route's name
	 * @return the endpoints, or {@code null} for an unknown route
	 */
	public @Nullable List<LlmEndpoint> route(String route) {
		return this.routes.get(route);
	}

	/**
	 * The routes, as endpoint names.
	 * @return every route's endpoint names, in order
	 */
	public Map<String, List<String>> routeNames() {
		Map<String, List<String>> names = new LinkedHashMap<>();
		this.routes.forEach((route, members) -> names.put(route, members.stream().map(LlmEndpoint::name).toList()));
		return names;
	}

	/** Send no more of the endpoints' own probes (the application is closing). */
	void stopProbes() {
		this.endpoints.values().forEach(LlmEndpoint::stopProbes);
	}

	/**
	 * Stop the endpoints' own probes, then release the resources (connection pools): a breaker
	 * still open keeps Resilience4j's timer to half-open, and a probe sent after this would find a
	 * closed pool.
	 */
	@Override
	public void close() throws Exception {
		stopProbes();
		for (AutoCloseable resource : this.resources) {
			resource.close();
		}
	}

}
