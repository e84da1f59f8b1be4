package dev.llmresilience.gateway;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.protocol.Completion;
import org.jspecify.annotations.Nullable;

/**
 * Hears what the gateway does, for metrics and audit. Every bean of this type is called, in order,
 * on the thread that finished the work: keep implementations fast and non-blocking. An exception
 * thrown by a listener is logged and ignored.
 */
public interface LlmGatewayListener {

	/**
	 * An attempt on an endpoint ended (not called for a cancelled attempt, except one that lost a
	 * hedged request's race: {@link dev.llmresilience.chat.Outcome#HEDGE_LOST}).
	 * @param route the route of the call
	 * @param endpoint the endpoint's settings
	 * @param attempt the attempt
	 * @param completion the answer when the attempt succeeded, else {@code null}
	 */
	default void onAttempt(String route, EndpointSettings endpoint, Attempt attempt, @Nullable Completion completion) {
	}

	/**
	 * A gateway call answered (any tier).
	 * @param route the route of the call
	 * @param response the answer
	 */
	default void onResponse(String route, ChatResponse response) {
	}

	/**
	 * A gateway call ended with an error: a caller error, or no answer with {@code busy-as-error}.
	 * @param route the route of the call
	 * @param error the error
	 */
	default void onError(String route, Throwable error) {
	}

	/**
	 * A hedged request ended, or the hedge budget refused one (see docs/hedging.md).
	 * @param route the route of the call
	 * @param first the endpoint tried first
	 * @param hedge the endpoint the request was hedged on
	 * @param outcome how it ended
	 */
	default void onHedge(String route, String first, String hedge, HedgeOutcome outcome) {
	}

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

}
