package dev.llmresilience.engine;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;

import static dev.llmresilience.engine.MeterTags.ENDPOINT;
import static dev.llmresilience.engine.MeterTags.OUTCOME;

/**
 * Binds the meters of the half-open probes the library sends itself
 * ({@code circuit-breaker.probe: synthetic}): per endpoint, those that succeeded and those that
 * failed.
 */
final class ProbeMeters implements MeterBinder {

	private static final String NAME = "llm.endpoint.probes";

	private static final String DESCRIPTION = "Half-open probes the library sent itself (circuit-breaker.probe: synthetic), by outcome";

	private final ObjectProvider<EndpointRegistry> endpoints;

	// looked up when the meters are bound: making the binder, which Boot may do while it sets up the
	// registry, creates none of the gateway's beans
	ProbeMeters(ObjectProvider<EndpointRegistry> endpoints) {
		this.endpoints = endpoints;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.endpoints.ifAvailable((endpoints) -> endpoints.endpoints().forEach((endpoint) -> {
			FunctionCounter.builder(NAME, endpoint, (probed) -> probed.probes().succeeded())
				.description(DESCRIPTION)
				.tags(ENDPOINT, endpoint.name(), OUTCOME, "success")
				.register(registry);
			FunctionCounter.builder(NAME, endpoint, (probed) -> probed.probes().failed())
				.description(DESCRIPTION)
				.tags(ENDPOINT, endpoint.name(), OUTCOME, "failure")
				.register(registry);
		}));
	}

}
