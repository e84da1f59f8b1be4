package dev.llmresilience.engine;

import dev.llmresilience.spi.DefaultAttemptObservationConvention;
import dev.llmresilience.spi.DefaultCallObservationConvention;

/**
 * The tag names of the starter's meters, one name per concept: those the observations carry too
 * are their conventions' ({@link DefaultCallObservationConvention},
 * {@link DefaultAttemptObservationConvention}), so that a meter and a trace say the same thing under
 * the same name; the rest are declared here.
 */
final class MeterTags {

	/** The route's name. */
	static final String ROUTE = DefaultCallObservationConvention.ROUTE;

	/** The endpoint's name. */
	static final String ENDPOINT = DefaultCallObservationConvention.ENDPOINT;

	/** The answer's tier. */
	static final String TIER = DefaultCallObservationConvention.TIER;

	/** How a call, a hedge or a probe ended. */
	static final String OUTCOME = DefaultCallObservationConvention.OUTCOME;

	/** The endpoint a call moved from. */
	static final String FROM = DefaultCallObservationConvention.FROM;

	/** The endpoint a call moved to. */
	static final String TO = DefaultCallObservationConvention.TO;

	/** How a route chooses among endpoints of equal priority ({@code llm.routes.<name>.balance}). */
	static final String BALANCE = "llm.balance";

	/** How a route orders its endpoints ({@code llm.routes.<name>.order}). */
	static final String ORDER = "llm.order";

	/** Which tokens a usage counts, {@code input} or {@code output} (OpenTelemetry's GenAI name). */
	static final String TOKEN_TYPE = "gen_ai.token.type";

	private MeterTags() {
	}

}
