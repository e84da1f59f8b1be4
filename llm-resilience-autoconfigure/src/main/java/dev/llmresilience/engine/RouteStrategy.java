package dev.llmresilience.engine;

/**
 * How one route orders its endpoints for each call.
 *
 * @param balance the choice among the endpoints of one group
 * @param order the order that forms the groups
 */
record RouteStrategy(Balance balance, RouteOrder order) {

	/** Today's strict priority list: the route's order, always. */
	public static final RouteStrategy PRIORITY = new RouteStrategy(Balance.PRIORITY, RouteOrder.PRIORITY);

}
