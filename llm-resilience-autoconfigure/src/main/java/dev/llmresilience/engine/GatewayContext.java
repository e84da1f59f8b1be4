package dev.llmresilience.engine;

/**
 * What every call of one gateway shares.
 *
 * @param settings the gateway's settings
 * @param degradation the route selector, cache, deferred queue and guards
 * @param degrader the degradation chain built on them
 * @param listeners the listeners
 * @param warnings the throttle of configuration warnings
 * @param hedging which routes hedge their requests
 */
record GatewayContext(GatewaySettings settings, Degradation degradation, Degrader degrader, Listeners listeners,
		ConfigurationWarnings warnings, Hedging hedging) {
}
