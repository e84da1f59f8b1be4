package dev.llmresilience.engine;

import org.jspecify.annotations.Nullable;

/**
 * How a route chooses among endpoints of equal rank ({@code llm.routes.<name>.balance}): the one
 * chosen is tried first, the rest of its group after it in the route's order.
 */
enum Balance {

	/** The route's order: the first endpoint of each group is always tried first. */
	PRIORITY("priority"),

	/** A random choice in proportion to each endpoint's {@code weight} (default 1). */
	WEIGHTED("weighted"),

	/**
	 * The power of two choices: two endpoints drawn at random, the one with the lower peak-EWMA time
	 * to first token (times its calls in flight, plus one) is tried first.
	 */
	LEAST_LATENCY("least-latency");

	private final String value;

	Balance(String value) {
		this.value = value;
	}

	/**
	 * The name used in configuration, metrics and the actuator.
	 * @return e.g. {@code least-latency}
	 */
	public String value() {
		return this.value;
	}

	/**
	 * The strategy a configuration value names, in any case, with {@code -} or {@code _}.
	 * @param name the value
	 * @return the strategy, or {@code null} when it names none
	 */
	public static @Nullable Balance named(String name) {
		return ConfigValues.named(values(), Balance::value, name);
	}

}
