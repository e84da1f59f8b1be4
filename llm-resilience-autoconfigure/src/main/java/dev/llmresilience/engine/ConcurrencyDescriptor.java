package dev.llmresilience.engine;


/**
 * The limit on gateway calls in flight ({@code llm.gateway.max-concurrent-calls}) in
 * {@code /actuator/llmbreakers}.
 *
 * @param maxConcurrentCalls the limit, 0 when off
 * @param inFlight calls in flight now (0 when off: nothing is counted then)
 * @param refused calls refused so far
 */
record ConcurrencyDescriptor(int maxConcurrentCalls, int inFlight, long refused) {

	static ConcurrencyDescriptor of(ConcurrencyLimit limit) {
		return new ConcurrencyDescriptor(limit.maxCalls(), limit.inFlight(), limit.refused());
	}

}
