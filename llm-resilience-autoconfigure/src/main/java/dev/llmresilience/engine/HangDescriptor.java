package dev.llmresilience.engine;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * The evidence of a hang an endpoint's {@link HangDetector} holds, in {@code /actuator/llmbreakers}.
 *
 * @param enabled whether the rule may open the breaker
 * @param threshold how long a silence is evidence now, or {@code null} when the rule cannot apply
 * (too few first-token times known, a threshold past {@code first-token-timeout}, switched off)
 * @param minWaitingCalls the fewest calls waiting that are evidence
 * @param waitingCalls the calls waiting for their first token now
 * @param oldestWait how long the oldest of them has waited, or {@code null} with none
 * @param lastFirstTokenAt when any call last had its first token, or {@code null} for never
 * @param openings how many times the rule opened the breaker since start-up
 * @param lastOpening why it last did, or {@code null}
 * @param probeTimeout how long a synthetic probe sent now would wait for its first token
 */
record HangDescriptor(boolean enabled, @Nullable Duration threshold, int minWaitingCalls, int waitingCalls,
		@Nullable Duration oldestWait, @Nullable Instant lastFirstTokenAt, long openings,
		@Nullable String lastOpening, Duration probeTimeout) {
}

