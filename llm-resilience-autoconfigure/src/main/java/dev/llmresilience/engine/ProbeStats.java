package dev.llmresilience.engine;

import java.time.Instant;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.gateway.EndpointSettings;
import org.jspecify.annotations.Nullable;

/**
 * The half-open probes an endpoint's breaker has had so far.
 *
 * @param mode who sends them
 * @param sent probes sent by the library ({@code 0} with {@link EndpointSettings.Probe#REQUESTS},
 * where users' calls are the probes)
 * @param succeeded of those, the ones that succeeded
 * @param failed of those, the ones that failed (a breaker failure or an ignored outcome)
 * @param lastAt when the last one ended, or {@code null}
 * @param lastOutcome how the last one ended, or {@code null}
 */
record ProbeStats(EndpointSettings.Probe mode, long sent, long succeeded, long failed, @Nullable Instant lastAt,
		@Nullable Outcome lastOutcome) {

	static ProbeStats requests() {
		return new ProbeStats(EndpointSettings.Probe.REQUESTS, 0, 0, 0, null, null);
	}

}
