package dev.llmresilience.spi;

import dev.llmresilience.chat.ChatResponse;
import io.micrometer.common.KeyValues;

/**
 * The starter's names for the observation of one gateway call ({@value #NAME}), and the one place
 * its key names are declared: the call meters of {@code LlmMetrics} take theirs from here. Every
 * key is set from the start and only changes value later: the timer Boot derives from this
 * observation must carry the same tag keys for an error, a BUSY answer and an answer, or Prometheus
 * refuses whichever shape comes second.
 */
public class DefaultCallObservationConvention implements CallObservationConvention {

	/** The observation's name. */
	public static final String NAME = "llm.gateway.call";

	/** The route's name. */
	public static final String ROUTE = "llm.route";

	/** The answer's tier, {@code NONE} before an answer and for an error. */
	public static final String TIER = "llm.tier";

	/** The endpoint that answered, {@value #NO_ENDPOINT} when none did. */
	public static final String ENDPOINT = "llm.endpoint";

	/** How a call, a hedge or a probe ended (a key of the meters). */
	public static final String OUTCOME = "llm.outcome";

	/** The endpoint a call moved from (a key of the meters). */
	public static final String FROM = "llm.from";

	/** The endpoint a call moved to (a key of the meters). */
	public static final String TO = "llm.to";

	/** The number of attempts the answer took (high cardinality: on the trace, not the timer). */
	public static final String ATTEMPTS = "llm.attempts";

	/** The {@value #ENDPOINT} of a call no endpoint answered (BUSY, DEFERRED, an error). */
	public static final String NO_ENDPOINT = "none";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(CallObservationContext context) {
		return "llm " + context.route();
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(CallObservationContext context) {
		ChatResponse response = context.response();
		String tier = (response != null) ? response.tier().name() : "NONE";
		String endpoint = (response != null && response.endpoint() != null) ? response.endpoint() : NO_ENDPOINT;
		return KeyValues.of(ROUTE, context.route(), TIER, tier, ENDPOINT, endpoint);
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(CallObservationContext context) {
		ChatResponse response = context.response();
		return (response != null) ? KeyValues.of(ATTEMPTS, String.valueOf(response.attempts().size())) : KeyValues.empty();
	}

}
