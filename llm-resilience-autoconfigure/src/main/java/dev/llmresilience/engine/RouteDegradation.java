package dev.llmresilience.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * How degraded one route's answers have been.
 *
 * @param answers answers in the window
 * @param degraded degraded answers in the window (any tier but PRIMARY)
 * @param degradedShare {@code degraded / answers}, from 0 to 1; {@code null} with no answer in the window
 * @param onlyDegradedSince when the current run of only degraded answers began, or {@code null}
 * when the last answer was PRIMARY (or there was none)
 * @param onlyDegradedFor how long that run has lasted; zero when there is none
 * @param warned whether the run has lasted past {@code llm.degradation.warn-after} (and was logged)
 * @param onlyDegradedTiers the run's answers by tier
 */
record RouteDegradation(int answers, int degraded, @Nullable Double degradedShare,
		@Nullable Instant onlyDegradedSince, Duration onlyDegradedFor, boolean warned,
		Map<String, Long> onlyDegradedTiers) {
}
