package dev.llmresilience.gateway;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.endpoint.LlmEndpoint;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * Names and key values of the gateway's Micrometer observations: {@value #CALL} per gateway call,
 * with one {@value #ATTEMPT} child per upstream attempt, so that a trace shows the attempts, their
 * endpoints and the fallback. Key values are bounded: route, endpoint, model, tier, outcome; never a
 * prompt.
 */
public final class GatewayObservations {

	/** The observation of one gateway call. */
	public static final String CALL = "llm.gateway.call";

	/** The observation of one upstream attempt (named as OpenTelemetry's GenAI client span). */
	public static final String ATTEMPT = LlmEndpoint.ATTEMPT_OBSERVATION;

	/** The {@code llm.endpoint} of a call no endpoint answered (BUSY, DEFERRED, an error). */
	public static final String NO_ENDPOINT = "none";

	private GatewayObservations() {
	}

	// Every key is set from the start and only overwritten later: the timer Boot derives from this
	// observation must carry the same tag keys for an error, a BUSY answer and an answer, or
	// Prometheus refuses whichever shape comes second.
	static Observation call(ObservationRegistry registry, String route) {
		if (registry.isNoop()) {
			return Observation.NOOP;
		}
		return Observation.createNotStarted(CALL, registry)
			.contextualName("llm " + route)
			.lowCardinalityKeyValue("llm.route", route)
			.lowCardinalityKeyValue("llm.tier", "NONE")
			.lowCardinalityKeyValue("llm.endpoint", NO_ENDPOINT);
	}

	static void answered(Observation observation, ChatResponse response) {
		observation.lowCardinalityKeyValue("llm.tier", response.tier().name());
		observation.lowCardinalityKeyValue("llm.endpoint", (response.endpoint() != null) ? response.endpoint() : NO_ENDPOINT);
		observation.highCardinalityKeyValue("llm.attempts", String.valueOf(response.attempts().size()));
	}

}
