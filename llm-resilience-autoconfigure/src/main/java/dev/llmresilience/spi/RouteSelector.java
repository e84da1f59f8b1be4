package dev.llmresilience.spi;

import dev.llmresilience.chat.ChatRequest;

/**
 * Picks the route of a request that names none. Declare a bean of this type to route by content,
 * e.g. short prompts to a cheap model; the default picks {@code default}.
 */
@FunctionalInterface
public interface RouteSelector {

	/** The selector that always picks the {@code default} route. */
	RouteSelector DEFAULT = (request) -> "default";

	/**
	 * Pick a route.
	 * @param request a request whose {@link ChatRequest#route()} is {@code null}
	 * @return the name of a configured route
	 */
	String select(ChatRequest request);

}
