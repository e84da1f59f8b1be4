package dev.llmresilience.engine;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.spi.AttemptObservationContext;
import dev.llmresilience.spi.AttemptObservationConvention;
import dev.llmresilience.spi.DefaultAttemptObservationConvention;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * The stage that starts the observation of one upstream attempt, a child of the gateway call's, as
 * the attempt is admitted, and stops it as the attempt ends; its names and key values are the
 * {@link AttemptObservationConvention}'s (an application's bean, else
 * {@link DefaultAttemptObservationConvention}). It comes after the permits: a refused attempt is
 * not observed.
 */
final class AttemptObservation implements AttemptStage {

	/** The observation's name. */
	static final String NAME = DefaultAttemptObservationConvention.NAME;

	static final AttemptObservation STAGE = new AttemptObservation();

	private static final AttemptObservationConvention DEFAULT = new DefaultAttemptObservationConvention();

	private AttemptObservation() {
	}

	@Override
	public @Nullable Throwable admit(EndpointAttempt attempt, long now) {
		attempt.observation = start(attempt.call().context().parent(), attempt.endpoint().settings(), "chat");
		return null;
	}

	@Override
	public void release(EndpointAttempt attempt, End end, long now) {
		Observation observation = attempt.observation;
		if (observation.isNoop() || !(observation.getContext() instanceof AttemptObservationContext context)) {
			return;
		}
		// the configured model, never one an answer names
		String model = attempt.endpoint().settings().upstream().model();
		switch (end) {
			case FINISHED -> {
				Throwable error = attempt.error();
				context.ended(attempt.outcome(), error != null, model);
				if (error != null) {
					observation.error(error);
				}
			}
			case LOST -> context.ended(Outcome.HEDGE_LOST, false, model);
			case REFUSED, CANCELLED -> context.cancelled(model);
		}
		observation.stop();
	}

	private static Observation start(@Nullable Observation parent, EndpointSettings settings, String operation) {
		if (parent == null || parent.isNoop()) {
			return Observation.NOOP;
		}
		return Observation.createNotStarted(null, DEFAULT, () -> new AttemptObservationContext(settings, operation),
				parent.getObservationRegistry())
			.parentObservation(parent)
			.start();
	}

}
