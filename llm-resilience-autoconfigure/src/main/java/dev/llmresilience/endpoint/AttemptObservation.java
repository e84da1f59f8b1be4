package dev.llmresilience.endpoint;

import dev.llmresilience.chat.Outcome;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * The observation of one upstream attempt ({@value #NAME}, named as OpenTelemetry's GenAI client
 * span), a child of the gateway call's. Its key values are bounded: they come from the endpoint's
 * configuration and from the outcome, never from a prompt or from what a provider chose to send.
 */
final class AttemptObservation {

	/** The observation's name. */
	static final String NAME = "gen_ai.client.operation";

	private AttemptObservation() {
	}

	static Observation start(@Nullable Observation parent, EndpointSettings settings, String operation) {
		if (parent == null || parent.isNoop()) {
			return Observation.NOOP;
		}
		return Observation.createNotStarted(NAME, parent.getObservationRegistry())
			.parentObservation(parent)
			.contextualName(operation + " " + settings.model())
			.lowCardinalityKeyValue("gen_ai.operation.name", "chat")
			.lowCardinalityKeyValue("gen_ai.provider.name", settings.providerName())
			.lowCardinalityKeyValue("gen_ai.request.model", settings.model())
			.lowCardinalityKeyValue("llm.endpoint", settings.name())
			.start();
	}

	static void stop(Observation observation, Outcome outcome, @Nullable Throwable error, String responseModel) {
		if (observation.isNoop()) {
			return;
		}
		observation.lowCardinalityKeyValue("llm.outcome", outcome.name());
		observation.lowCardinalityKeyValue("error.type", (error != null) ? outcome.name() : "none");
		observation.lowCardinalityKeyValue("gen_ai.response.model", responseModel);
		if (error != null) {
			observation.error(error);
		}
		observation.stop();
	}

	static void cancelled(Observation observation, String responseModel) {
		if (observation.isNoop()) {
			return;
		}
		observation.lowCardinalityKeyValue("llm.outcome", "CANCELLED");
		observation.lowCardinalityKeyValue("error.type", "cancelled");
		observation.lowCardinalityKeyValue("gen_ai.response.model", responseModel);
		observation.stop();
	}

}
