package dev.llmresilience.engine;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * An endpoint's recent times to first token in {@code /actuator/llmbreakers}, as an adaptive hedge
 * delay reads them.
 *
 * @param samples attempts recorded since start-up
 * @param p50 the median of the recent ones, or {@code null} with too few
 * @param p95 the 95th percentile, or {@code null}
 * @param p99 the 99th percentile, or {@code null}
 */
record FirstTokenDescriptor(long samples, @Nullable Duration p50, @Nullable Duration p95,
		@Nullable Duration p99) {

	static FirstTokenDescriptor of(FirstTokenTimes times) {
		return new FirstTokenDescriptor(times.count(), times.percentile(50), times.percentile(95), times.percentile(99));
	}

}
