package dev.llmresilience.chat;

import org.jspecify.annotations.Nullable;

/**
 * The state of a deferred request.
 *
 * @param ticket the request's ticket
 * @param state where it stands
 * @param response the answer once {@link State#COMPLETED}, else {@code null}
 * @param reason why it failed once {@link State#FAILED}, else {@code null}
 */
public record DeferredResult(String ticket, State state, @Nullable ChatResponse response, @Nullable String reason) {

	/** Where a deferred request stands. */
	public enum State {

		/** Waiting for its next attempt. */
		PENDING,

		/** Answered. */
		COMPLETED,

		/** Gave up after its attempts. */
		FAILED

	}

}
