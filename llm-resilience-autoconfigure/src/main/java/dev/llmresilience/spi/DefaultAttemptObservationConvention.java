package dev.llmresilience.spi;

import dev.llmresilience.gateway.EndpointSettings;
import io.micrometer.common.KeyValues;

/**
 * The starter's names for the observation of one upstream attempt ({@value #NAME}, named as
 * OpenTelemetry's GenAI client span), a child of the gateway call's, and the one place its key
 * names are declared: the attempt meters of {@code LlmMetrics} take theirs from here. Every key is
 * bounded: from the endpoint's configuration and from the outcome, never from a prompt or from what
 * a provider chose to send.
 */
public class DefaultAttemptObservationConvention implements AttemptObservationConvention {

	/** The observation's name. */
	public static final String NAME = "gen_ai.client.operation";

	/** The GenAI operation, {@code chat}. */
	public static final String OPERATION_NAME = "gen_ai.operation.name";

	/** The provider, as OpenTelemetry spells it ({@link EndpointSettings#providerName()}). */
	public static final String PROVIDER_NAME = "gen_ai.provider.name";

	/** The endpoint's configured model. */
	public static final String REQUEST_MODEL = "gen_ai.request.model";

	/** The model named as the response's. */
	public static final String RESPONSE_MODEL = "gen_ai.response.model";

	/** The endpoint's name: the call's key of the same name. */
	public static final String ENDPOINT = DefaultCallObservationConvention.ENDPOINT;

	/** How the attempt ended: an {@code Outcome}, or {@code CANCELLED}; the call's key of the same name. */
	public static final String OUTCOME = DefaultCallObservationConvention.OUTCOME;

	/** {@code none}, the outcome of a failed attempt, or {@code cancelled}. */
	public static final String ERROR_TYPE = "error.type";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(AttemptObservationContext context) {
		return context.operation() + " " + context.endpoint().upstream().model();
	}

	// The keys of the end are added once the attempt has ended, to the same four of its start.
	@Override
	public KeyValues getLowCardinalityKeyValues(AttemptObservationContext context) {
		EndpointSettings endpoint = context.endpoint();
		KeyValues start = KeyValues.of(OPERATION_NAME, context.operation(), PROVIDER_NAME, endpoint.providerName(),
				REQUEST_MODEL, endpoint.upstream().model(), ENDPOINT, endpoint.name());
		if (!context.ended()) {
			return start;
		}
		String responseModel = (context.responseModel() != null) ? context.responseModel()
				: endpoint.upstream().model();
		if (context.cancelled()) {
			return start.and(OUTCOME, "CANCELLED", ERROR_TYPE, "cancelled", RESPONSE_MODEL, responseModel);
		}
		String outcome = String.valueOf(context.outcome());
		return start.and(OUTCOME, outcome, ERROR_TYPE, context.failed() ? outcome : "none", RESPONSE_MODEL, responseModel);
	}

}
