package dev.llmresilience.spi;

import io.micrometer.observation.GlobalObservationConvention;
import io.micrometer.observation.Observation;

/**
 * Names and key values of the observation of one gateway call. The starter's is
 * {@link DefaultCallObservationConvention}; a bean of this type replaces it (Spring Boot registers
 * it with the {@code ObservationRegistry}, and every call's observation asks the registry before
 * taking the default).
 */
public interface CallObservationConvention extends GlobalObservationConvention<CallObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof CallObservationContext;
	}

}
