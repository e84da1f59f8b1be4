package dev.llmresilience.engine;

import org.jspecify.annotations.Nullable;

/**
 * The order of a route's endpoints ({@code llm.routes.<name>.order}), and so its groups: the
 * endpoints of one group share the load as the route's {@link Balance} says, and the route falls
 * back from one group to the next.
 */
enum RouteOrder {

	/**
	 * The route's own order (its list, or for the implicit {@code default} route priority then
	 * name); consecutive endpoints of equal {@code priority} form a group.
	 */
	PRIORITY("priority"),

	/**
	 * By price, cheapest first: input plus output price per million tokens; endpoints without a
	 * price come last; endpoints of equal price (kept in the route's order) form a group.
	 */
	CHEAPEST_FIRST("cheapest-first");

	private final String value;

	RouteOrder(String value) {
		this.value = value;
	}

	/**
	 * The name used in configuration, metrics and the actuator.
	 * @return e.g. {@code cheapest-first}
	 */
	public String value() {
		return this.value;
	}

	/**
	 * The order a configuration value names, in any case, with {@code -} or {@code _}.
	 * @param name the value
	 * @return the order, or {@code null} when it names none
	 */
	public static @Nullable RouteOrder named(String name) {
		return ConfigValues.named(values(), RouteOrder::value, name);
	}

}
