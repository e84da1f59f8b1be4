package dev.llmresilience.chat;

/**
 * What one upstream attempt came to. Each constant carries its row of the failure rules
 * (docs/failure-rules.md): whether the same endpoint tries again, whether the endpoint's circuit
 * breaker counts it as a failure, and whether the gateway moves on to the next endpoint or hands
 * the error to the caller.
 */
public enum Outcome {

	/** A 2xx with content or tool calls. */
	SUCCESS(false, false, Action.RETURN),

	/** A 2xx whose message has neither content (ignoring whitespace) nor tool calls. */
	EMPTY_RESPONSE(true, true, Action.FALL_BACK),

	/**
	 * A 2xx body that is not valid JSON, lacks {@code choices} (Anthropic: {@code content}), or is
	 * larger than the size limit; or a stream that sends more than {@code max-stream-size} bytes or
	 * {@code max-stream-events} events in one attempt.
	 */
	MALFORMED_RESPONSE(true, true, Action.FALL_BACK),

	/**
	 * {@code finish_reason: content_filter} (Anthropic: {@code stop_reason: refusal}) or an error whose
	 * code is {@code content_filter}. Not the provider's fault.
	 */
	CONTENT_FILTERED(false, false, Action.FALL_BACK),

	/** 408, 409, 5xx or 529. */
	SERVER_ERROR(true, true, Action.FALL_BACK),

	/** 429: retried only when the provider's Retry-After fits within {@code max-retry-after}. */
	RATE_LIMITED(true, true, Action.FALL_BACK),

	/**
	 * No first token within {@code first-token-timeout}, a silence over {@code stream-idle-timeout}, no
	 * complete answer within the attempt's {@code timeout}, or no connection within
	 * {@code connect-timeout}. A first-token timeout is not retried on the same endpoint while a later
	 * endpoint of the route is available: a model that has not begun to answer in that time is more
	 * likely down than slow, and the next endpoint answers sooner than a second wait would.
	 */
	TIMEOUT(true, true, Action.FALL_BACK),

	/** Connection refused, reset or closed before a complete response. */
	CONNECTION_FAILED(true, true, Action.FALL_BACK),

	/**
	 * 400 (and 413, 422): the request itself is wrong; another endpoint would refuse it too. Also a
	 * request refused before it is sent (a reserved extra field, a timeout above its ceiling).
	 */
	INVALID_REQUEST(false, false, Action.SURFACE),

	/** 400 with code {@code context_length_exceeded}: the prompt is too long for the model. */
	CONTEXT_LENGTH_EXCEEDED(false, false, Action.SURFACE),

	/** 401, 403, 404 and other 4xx: the endpoint is misconfigured (key, model name, URL). */
	CONFIGURATION_ERROR(false, true, Action.FALL_BACK),

	/** The endpoint's circuit breaker is open, or its half-open probes are in use: no call was made. */
	BREAKER_OPEN(false, false, Action.FALL_BACK),

	/** The endpoint's bulkhead has no free permit: no call was made. */
	BULKHEAD_FULL(false, false, Action.FALL_BACK),

	/**
	 * What is known of the provider's rate limit (its configured {@code rate-limits}, what its
	 * headers announced, or a 429) cannot take the call before the window's reset: no call was made,
	 * and the call goes on to the route's next endpoint at once instead of into a 429. Also a
	 * {@link Priority#BATCH} call past {@code llm.gateway.batch-share} of the endpoint. Unlike
	 * {@link #RATE_LIMITED}, no request reached the provider: not a breaker failure, not retried.
	 */
	CAPACITY_EXHAUSTED(false, false, Action.FALL_BACK),

	/**
	 * A stream failed after its first content chunk reached the caller: the connection was reset or
	 * closed, the provider sent an error event, or the stream ended with neither a finish reason nor
	 * the protocol's end ({@code [DONE]}, Anthropic's {@code message_stop}). Never retried (that would repeat what the caller has already received); the
	 * caller gets the partial answer, unless {@code llm.gateway.stream.resume-on-fallback} continues it
	 * on the next endpoint.
	 */
	STREAM_INTERRUPTED(false, true, Action.SURFACE),

	/**
	 * A stream fell silent for longer than {@code stream-idle-timeout} after its first content chunk.
	 * Handled like {@link #STREAM_INTERRUPTED}.
	 */
	STREAM_STALLED(false, true, Action.SURFACE),

	/**
	 * The call-volume guard ({@code llm.gateway.guard.max-calls-per-hour}) is spent: no call was
	 * made, and none will be on any endpoint until its window frees.
	 */
	GUARD_TRIPPED(false, false, Action.DEGRADE),

	/**
	 * The gateway already has {@code llm.gateway.max-concurrent-calls} calls in flight: the call was
	 * refused before any endpoint was tried (the attempt names the endpoint it would have tried
	 * first) and degrades at once: cached answer, deferral, BUSY.
	 */
	GATEWAY_FULL(false, false, Action.DEGRADE),

	/**
	 * The call's deadline ran out: before the attempt (no call was made), or during it, before any of
	 * the endpoint's own timeouts (an attempt's timeouts are capped at what is left of the deadline,
	 * and a cut made by the caller's deadline is not the provider's fault, so the breaker ignores it).
	 */
	DEADLINE_EXCEEDED(false, false, Action.FALL_BACK),

	/**
	 * The endpoint's circuit breaker opened while this attempt was still waiting for its first token:
	 * the attempt was abandoned (its permits freed, nothing recorded) and the call moved on to the
	 * route's next endpoint at once, rather than waiting out a model the breaker now believes is down.
	 */
	RELEASED(false, false, Action.FALL_BACK),

	/**
	 * A hedged request ({@code llm.gateway.hedge}) sent the same call to the route's next endpoint,
	 * and the other endpoint brought its first token first: this attempt was cancelled before the
	 * caller saw any of it. Not a failure: the breaker records it as a slow call (its duration at
	 * least {@code slow-call-duration-threshold}), so an endpoint that keeps losing hedges is seen
	 * as slow, never as broken. The call goes on with the winner.
	 */
	HEDGE_LOST(false, false, Action.FALL_BACK);

	private final boolean retryable;

	private final boolean breakerFailure;

	private final Action action;

	Outcome(boolean retryable, boolean breakerFailure, Action action) {
		this.retryable = retryable;
		this.breakerFailure = breakerFailure;
		this.action = action;
	}

	/**
	 * Whether the same endpoint may try again after this outcome (subject to its retry budget and,
	 * for {@link #RATE_LIMITED}, to the provider's Retry-After).
	 * @return true if retried on the same endpoint
	 */
	public boolean isRetryable() {
		return this.retryable;
	}

	/**
	 * Whether the endpoint's circuit breaker records this outcome as a failure. Outcomes that are
	 * neither a success nor a failure are ignored: they release the breaker's permit unrecorded.
	 * @return true if counted as a breaker failure
	 */
	public boolean isBreakerFailure() {
		return this.breakerFailure;
	}

	/**
	 * What the gateway does next.
	 * @return the action
	 */
	public Action action() {
		return this.action;
	}

	/** What the gateway does after an endpoint's last attempt ended with an outcome. */
	public enum Action {

		/** Return the response. */
		RETURN,

		/** Try the route's next endpoint; when none is left, degrade. */
		FALL_BACK,

		/** Try no further endpoint: degrade at once (cached answer, deferral, busy answer). */
		DEGRADE,

		/**
		 * Hand the typed exception to the caller: an {@code LlmRequestException}, or an
		 * {@code LlmStreamInterruptedException} (which {@code llm.gateway.stream.resume-on-fallback}
		 * turns into a continuation on the next endpoint). No fallback.
		 */
		SURFACE

	}

}
