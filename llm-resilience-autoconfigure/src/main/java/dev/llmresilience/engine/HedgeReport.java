package dev.llmresilience.engine;

/**
 * What one route's hedging has come to, for {@code /actuator/llmbreakers}.
 *
 * @param settings how the route hedges
 * @param callsInWindow the route's calls in the budget's sliding window
 * @param hedgesInWindow hedged calls in the window
 * @param hedgeWon hedges since start-up where the hedge brought its first token first
 * @param firstWon hedges since start-up where the endpoint tried first won after all
 * @param noWinner hedges since start-up where both endpoints failed
 * @param refused hedges the budget refused since start-up
 */
record HedgeReport(HedgeSettings settings, long callsInWindow, long hedgesInWindow, long hedgeWon,
		long firstWon, long noWinner, long refused) {
}
