package dev.llmresilience.spi;

import io.micrometer.observation.GlobalObservationConvention;
import io.micrometer.observation.Observation;

/**
 * Names and key values of the observation of one upstream attempt. The starter's is
 * {@link DefaultAttemptObservationConvention}; a bean of this type replaces it (Spring Boot
 * registers it with the {@code ObservationRegistry}, and every attempt's observation asks the
 * registry before taking the default).
 */
public interface AttemptObservationConvention extends GlobalObservationConvention<AttemptObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof AttemptObservationContext;
	}

}
