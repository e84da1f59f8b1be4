package dev.llmresilience.engine;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.spi.CallObservationContext;
import dev.llmresilience.spi.CallObservationConvention;
import dev.llmresilience.spi.DefaultAttemptObservationConvention;
import dev.llmresilience.spi.DefaultCallObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * The gateway's Micrometer observations: {@value #CALL} per gateway call, with one {@value #ATTEMPT}
 * child per upstream attempt, so that a trace shows the attempts, their endpoints and the fallback.
 * Their names and key values are the conventions' ({@link CallObservationConvention},
 * {@code AttemptObservationConvention}: an application's bean, else the starter's default).
 */
final class GatewayObservations {

	/** The observation of one gateway call. */
	public static final String CALL = DefaultCallObservationConvention.NAME;

	/** The observation of one upstream attempt (named as OpenTelemetry's GenAI client span). */
	public static final String ATTEMPT = DefaultAttemptObservationConvention.NAME;

	/** The {@code llm.endpoint} of a call no endpoint answered (BUSY, DEFERRED, an error). */
	public static final String NO_ENDPOINT = DefaultCallObservationConvention.NO_ENDPOINT;

	private static final CallObservationConvention DEFAULT = new DefaultCallObservationConvention();

	private GatewayObservations() {
	}

	static Observation call(ObservationRegistry registry, String route) {
		if (registry.isNoop()) {
			return Observation.NOOP;
		}
		return Observation.createNotStarted(null, DEFAULT, () -> new CallObservationContext(route), registry);
	}

	static void answered(Observation observation, ChatResponse response) {
		if (observation.getContext() instanceof CallObservationContext context) {
			context.answered(response);
		}
	}

}
