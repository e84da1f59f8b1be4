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
 * the retries the budget still has; {@value #BATCH_REFUSED}, the batch calls its batch share
 * refused; {@value #BATCH_IN_FLIGHT}, the batch calls in flight on it.
 */
final class CapacityMeters implements MeterBinder {

	/** Calls not sent to an endpoint because its known rate limit could not take them. */
	static final String RATE_LIMITED = "llm.endpoint.rate-limited";

	/** Retries an endpoint's retry budget refused. */
	static final String RETRIES_REFUSED = "llm.endpoint.retry-budget.refused";

	/** Retries an endpoint's retry budget still has over the last minute. */
	static final String RETRY_BUDGET_LEFT = "llm.endpoint.retry-budget.left";

	/** Batch calls not sent to an endpoint because they had used its batch share. */
	static final String BATCH_REFUSED = "llm.endpoint.batch-share.refused";

	/** Batch calls in flight on an endpoint. */
	static final String BATCH_IN_FLIGHT = "llm.endpoint.batch-share.in-flight";

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
			FunctionCounter.builder(BATCH_REFUSED, endpoint, (batch) -> batch.batchShare().refused())
				.description("Batch calls not sent to an endpoint: they had used its share (llm.gateway.batch-share)")
				.tags(ENDPOINT, endpoint.name())
				.register(registry);
			Gauge.builder(BATCH_IN_FLIGHT, endpoint, (batch) -> batch.batchShare().inFlight())
				.description("Batch calls in flight on an endpoint")
				.tags(ENDPOINT, endpoint.name())
				.register(registry);
		}));
	}

}
