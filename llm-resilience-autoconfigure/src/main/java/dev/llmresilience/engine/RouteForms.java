package dev.llmresilience.engine;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.core.ResolvableType;
import org.springframework.core.env.Environment;

/**
 * Both forms of {@code llm.routes.<name>}. Boot binds the object form ({@code endpoints},
 * {@code balance}, {@code order}) and the comma-separated list ({@code llm.routes.cheap=a,b},
 * through {@link LlmProperties.Route#LlmProperties.Route(String)}) into {@link LlmProperties#getRoutes()},
 * but drops an indexed list (a YAML list, or {@code llm.routes.cheap[0]=a}), which is not a bean's
 * shape; so the routes are bound once more as lists of names, and each name that is neither an
 * object-form route nor one of its keys is a route in the list form.
 */
final class RouteForms {

	private static final ConfigurationPropertyName ROUTES = ConfigurationPropertyName.of("llm.routes");

	private static final Set<String> KEYS = Set.of("endpoints", "balance", "order");

	private static final Bindable<Map<String, List<String>>> LISTS = Bindable.of(ResolvableType.forClassWithGenerics(
			Map.class, ResolvableType.forClass(String.class), ResolvableType.forClassWithGenerics(List.class, String.class)));

	private RouteForms() {
	}

	/**
	 * Whether a key is one element of a route in the indexed list form ({@code llm.routes.cheap[0]}),
	 * which the bean binding leaves unbound and {@link #of} reads.
	 * @param name the key
	 * @return true for {@code llm.routes.<name>[<index>]}
	 */
	static boolean isListElement(ConfigurationPropertyName name) {
		return ROUTES.isAncestorOf(name) && name.getNumberOfElements() == ROUTES.getNumberOfElements() + 2
				&& name.isNumericIndex(ROUTES.getNumberOfElements() + 1);
	}

	/**
	 * Every configured route, in the order of the configuration.
	 * @param properties the bound properties
	 * @param environment where they were bound from
	 * @return the routes by name
	 */
	static Map<String, LlmProperties.Route> of(LlmProperties properties, Environment environment) {
		Map<String, LlmProperties.Route> bound = properties.getRoutes();
		Map<String, List<String>> lists = Binder.get(environment).bind("llm.routes", LISTS).orElse(Map.of());
		Map<String, LlmProperties.Route> routes = new LinkedHashMap<>();
		lists.forEach((name, endpoints) -> {
			if (bound.containsKey(name)) {
				routes.putIfAbsent(name, bound.get(name));
				return;
			}
			String owner = bound.keySet().stream().filter((route) -> name.startsWith(route + ".")).findFirst().orElse(null);
			if (owner == null) {
				routes.put(name, LlmProperties.Route.listed(endpoints));
				return;
			}
			String key = name.substring(owner.length() + 1);
			if (!KEYS.contains(key)) {
				throw new LlmConfigurationException(RouteResolver.property(owner) + "." + key, "is not a key of a route",
						"A route takes endpoints, balance and order (" + RouteResolver.property(owner)
								+ ".endpoints=a,b), or is a list of endpoints itself (" + RouteResolver.property(owner) + "=a,b).");
			}
			routes.putIfAbsent(owner, bound.get(owner));
		});
		bound.forEach(routes::putIfAbsent);
		return routes;
	}

}
