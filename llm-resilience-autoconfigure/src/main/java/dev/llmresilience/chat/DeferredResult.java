package dev.llmresilience.chat;

import org.jspecify.annotations.Nullable;

/**
 * The state of a deferred request.
 *
 * @param ticket the request's ticket
 * @param state where it stands
 * @param response the answer once {@link State#COMPLETED}, else {@code null}
 * @param reason why it failed once {@link State#FAILED}, else {@code null}
 * @param durable whether the request is stored where it outlives this instance (with
 * {@code llm.shared-state.type=redis}: in Redis, where another replica completes it if this one
 * dies); false while it is held here only: the in-memory store always, and a Redis store while Redis
 * is unreachable or has not acknowledged it yet
 */
public record DeferredResult(String ticket, State state, @Nullable ChatResponse response, @Nullable String reason,
		boolean durable) {

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
