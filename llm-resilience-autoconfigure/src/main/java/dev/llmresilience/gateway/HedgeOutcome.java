package dev.llmresilience.gateway;

/** How one hedged request ended, as {@link LlmGatewayListener#onHedge} hears of it. */
public enum HedgeOutcome {

	/** The endpoint the request was hedged on brought its first token first: the other lost. */
	HEDGE_WON,

	/** The endpoint tried first brought its first token first, after the hedge had started: the hedge lost. */
	FIRST_WON,

	/** Both endpoints failed before either brought a token: the route walk went on after them. */
	NO_WINNER,

	/** The hedge delay passed but the route's hedge budget was spent: no hedge was sent. */
	REFUSED

}
