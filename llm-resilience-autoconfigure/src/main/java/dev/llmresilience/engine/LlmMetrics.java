package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.util.List;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGatewayListener;
import dev.llmresilience.gateway.LlmGatewayListener.HedgeOutcome;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.spi.DefaultAttemptObservationConvention;
import dev.llmresilience.spi.DefaultCallObservationConvention;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

import static dev.llmresilience.engine.MeterTags.ENDPOINT;
import static dev.llmresilience.engine.MeterTags.FROM;
import static dev.llmresilience.engine.MeterTags.OUTCOME;
import static dev.llmresilience.engine.MeterTags.ROUTE;
import static dev.llmresilience.engine.MeterTags.TIER;
import static dev.llmresilience.engine.MeterTags.TO;
import static dev.llmresilience.engine.MeterTags.TOKEN_TYPE;
import static dev.llmresilience.spi.DefaultAttemptObservationConvention.ERROR_TYPE;
import static dev.llmresilience.spi.DefaultAttemptObservationConvention.OPERATION_NAME;
import static dev.llmresilience.spi.DefaultAttemptObservationConvention.PROVIDER_NAME;
import static dev.llmresilience.spi.DefaultAttemptObservationConvention.REQUEST_MODEL;
import static dev.llmresilience.spi.DefaultAttemptObservationConvention.RESPONSE_MODEL;

/**
 * Records the gateway's meters:
 * <ul>
 * <li>{@value #OPERATION_DURATION} (timer, seconds) per upstream attempt, and
 * {@value #TOKEN_USAGE} (distribution summary, tokens) per successful attempt, named and tagged as
 * OpenTelemetry's GenAI semantic conventions say, plus {@code llm.endpoint};</li>
 * <li>{@value #CALLS} per gateway call (route, tier, outcome), {@value #FALLBACKS} per move from one
 * endpoint to the next (route, from, to), {@value #COST} (endpoint) adding each answer's cost, and
 * {@value #HEDGES} per hedged request or refused hedge (route, first, hedge, outcome).</li>
 * </ul>
 * Names and tag keys shared with the observations come from their conventions
 * ({@link DefaultAttemptObservationConvention}, {@link DefaultCallObservationConvention}), the other
 * tag keys from {@link MeterTags}.
 * Every meter of one name carries the same tag keys (Prometheus needs it): {@code error.type} is
 * {@code none} on success. Every tag value comes from configuration (endpoint, route, model,
 * provider) or from a closed set (outcome, tier); none from what a caller or a provider sent.
 */
class LlmMetrics implements LlmGatewayListener {

	/** Duration of one upstream attempt. */
	public static final String OPERATION_DURATION = DefaultAttemptObservationConvention.NAME + ".duration";

	/** Tokens of one successful attempt, by {@code gen_ai.token.type} (input, output). */
	public static final String TOKEN_USAGE = "gen_ai.client.token.usage";

	/** Gateway calls by route, tier and outcome. */
	public static final String CALLS = "llm.gateway.calls";

	/** Moves from one endpoint to the next within a call, by route, from and to. */
	public static final String FALLBACKS = "llm.gateway.fallbacks";

	/** Cost of the answers, in the currency of the endpoints' prices, by endpoint. */
	public static final String COST = "llm.gateway.cost";

	/** Hedged requests by route, the endpoint tried first, the hedge's endpoint and how they ended. */
	public static final String HEDGES = "llm.gateway.hedges";

	// OpenTelemetry's unit is "{token}", but Prometheus appends the base unit to the name, and
	// "{token}" became "gen_ai_client_token_usage__token__count".
	private static final String TOKEN_UNIT = "tokens";

	private final MeterRegistry registry;

	/**
	 * Create the meters' recorder.
	 * @param registry the registry
	 */
	public LlmMetrics(MeterRegistry registry) {
		this.registry = registry;
	}

	@Override
	public void onAttempt(String route, EndpointSettings endpoint, Attempt attempt, @Nullable Completion completion) {
		if (attempt.outcome() == Outcome.BREAKER_OPEN || attempt.outcome() == Outcome.BULKHEAD_FULL
				|| attempt.outcome() == Outcome.GATEWAY_FULL || attempt.outcome() == Outcome.CAPACITY_EXHAUSTED) {
			return; // no call was made
		}
		// The configured model, not the one the answer names: a provider or proxy that names a new model
		// in each answer would otherwise create a new series each time (ChatResponse.model() has its value).
		Tags tags = Tags.of(OPERATION_NAME, "chat", PROVIDER_NAME, endpoint.providerName(),
				REQUEST_MODEL, endpoint.upstream().model(), RESPONSE_MODEL, endpoint.upstream().model(), ENDPOINT,
				endpoint.name());
		Timer.builder(OPERATION_DURATION)
			.description("Duration of one LLM client operation (one upstream attempt)")
			.tags(tags)
			.tag(ERROR_TYPE, (attempt.outcome() == Outcome.SUCCESS) ? "none" : attempt.outcome().name())
			.register(this.registry)
			.record(attempt.duration());
		if (completion != null && completion.usage() != null) {
			recordTokens(tags, "input", completion.usage().promptTokens());
			recordTokens(tags, "output", completion.usage().completionTokens());
		}
	}

	private void recordTokens(Tags tags, String type, @Nullable Integer tokens) {
		if (tokens != null) {
			DistributionSummary.builder(TOKEN_USAGE)
				.description("Tokens used by one LLM client operation")
				.baseUnit(TOKEN_UNIT)
				.tags(tags)
				.tag(TOKEN_TYPE, type)
				.register(this.registry)
				.record(tokens);
		}
	}

	@Override
	public void onResponse(String route, ChatResponse response) {
		count(route, response.tier().name(), (response.tier() == Tier.BUSY) ? "busy" : "answered");
		countFallbacks(route, response.attempts());
		BigDecimal cost = response.cost();
		if (cost != null && response.endpoint() != null) {
			Counter.builder(COST)
				.description("Cost of LLM answers, in the currency of the endpoints' prices")
				.tag(ENDPOINT, response.endpoint())
				.register(this.registry)
				.increment(cost.doubleValue());
		}
	}

	@Override
	public void onError(String route, Throwable error) {
		count(route, "NONE", "error");
	}

	@Override
	public void onHedge(String route, String first, String hedge, HedgeOutcome outcome) {
		Counter.builder(HEDGES)
			.description("Hedged requests (and hedges the budget refused) by route and outcome")
			.tags(ROUTE, route, FROM, first, TO, hedge, OUTCOME, outcome.name())
			.register(this.registry)
			.increment();
	}

	private void count(String route, String tier, String outcome) {
		Counter.builder(CALLS)
			.description("Gateway calls by route, tier and outcome")
			.tags(ROUTE, route, TIER, tier, OUTCOME, outcome)
			.register(this.registry)
			.increment();
	}

	private void countFallbacks(String route, List<Attempt> attempts) {
		for (int i = 1; i < attempts.size(); i++) {
			String from = attempts.get(i - 1).endpoint();
			String to = attempts.get(i).endpoint();
			if (!from.equals(to)) {
				Counter.builder(FALLBACKS)
					.description("Moves from one endpoint to the next within a gateway call")
					.tags(ROUTE, route, FROM, from, TO, to)
					.register(this.registry)
					.increment();
			}
		}
	}

}
