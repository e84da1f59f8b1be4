package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.ObjectProvider;

import static dev.llmresilience.engine.MeterTags.ENDPOINT;

/**
 * Binds the meters of each endpoint's known capacity and retry budget (docs/capacity.md):
 * {@value #RATE_LIMITED}, the calls routed away before a 429 because its known rate limit could not
 * take them; {@value #RETRIES_REFUSED}, the retries its budget refused; {@value #RETRY_BUDGET_LEFT},
 * the retries the budget still has.
 */
final class CapacityMeters implements MeterBinder {

	/** Calls not sent to an endpoint because its known rate limit could not take them. */
	static final String RATE_LIMITED = "llm.endpoint.rate-limited";

	/** Retries an endpoint's retry budget refused. */
	static final String RETRIES_REFUSED = "llm.endpoint.retry-budget.refused";

	/** Retries an endpoint's retry budget still has over the last minute. */
	static final String RETRY_BUDGET_LEFT = "llm.endpoint.retry-budget.left";

	private final ObjectProvider<EndpointRegistry> endpoints;

	CapacityMeters(ObjectProvider<EndpointRegistry> endpoints) {
		this.endpoints = endpoints;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.endpoints.ifAvailable((endpoints) -> endpoints.endpoints().forEach((endpoint) -> {
			FunctionCounter.builder(RATE_LIMITED, endpoint, LlmEndpoint::routedAwayCount)
				.description("Calls routed away from an endpoint before a 429: its known rate limit could not take them")
				.tags(ENDPOINT, endpoint.name())
				.register(registry);
			FunctionCounter.builder(RETRIES_REFUSED, endpoint, LlmEndpoint::retriesRefused)
				.description("Retries an endpoint's retry budget (retry.budget) refused")
				.tags(ENDPOINT, endpoint.name())
				.register(registry);
			Gauge.builder(RETRY_BUDGET_LEFT, endpoint,
					(budgeted) -> budgeted.retryBudget().state(Schedulers.parallel().now(TimeUnit.NANOSECONDS)).left())
				.description("Retries an endpoint's retry budget still has over the last minute")
				.tags(ENDPOINT, endpoint.name())
				.register(registry);
		}));
	}

}
