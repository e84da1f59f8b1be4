package dev.llmresilience.engine;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.spi.AttemptObservationContext;
import dev.llmresilience.spi.AttemptObservationConvention;
import dev.llmresilience.spi.DefaultAttemptObservationConvention;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * Starts and ends the observation of one upstream attempt, a child of the gateway call's; its
 * names and key values are the {@link AttemptObservationConvention}'s (an application's bean, else
 * {@link DefaultAttemptObservationConvention}).
 */
final class AttemptObservation {

	/** The observation's name. */
	static final String NAME = DefaultAttemptObservationConvention.NAME;

	private static final AttemptObservationConvention DEFAULT = new DefaultAttemptObservationConvention();

	private AttemptObservation() {
	}

	static Observation start(@Nullable Observation parent, EndpointSettings settings, String operation) {
		if (parent == null || parent.isNoop()) {
			return Observation.NOOP;
		}
		return Observation.createNotStarted(null, DEFAULT, () -> new AttemptObservationContext(settings, operation),
				parent.getObservationRegistry())
			.parentObservation(parent)
			.start();
	}

	static void stop(Observation observation, Outcome outcome, @Nullable Throwable error, String responseModel) {
		if (observation.isNoop() || !(observation.getContext() instanceof AttemptObservationContext context)) {
			return;
		}
		context.ended(outcome, error != null, responseModel);
		if (error != null) {
			observation.error(error);
		}
		observation.stop();
	}

	static void cancelled(Observation observation, String responseModel) {
		if (observation.isNoop() || !(observation.getContext() instanceof AttemptObservationContext context)) {
			return;
		}
		context.cancelled(responseModel);
		observation.stop();
	}

}
