package dev.llmresilience.failure;

import dev.llmresilience.chat.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * A streamed answer broke after part of it had reached the caller. The stream is not restarted
 * (the caller would receive the beginning twice); the caller gets the text received so far and
 * decides: show it as cut off, ask again, or set {@code llm.gateway.stream.resume-on-fallback=true}
 * to let the gateway continue the answer on the route's next endpoint.
 */
public final class LlmStreamInterruptedException extends LlmException {

	private final Outcome outcome;

	private final String partial;

	/**
	 * Create an instance.
	 * @param endpoint the endpoint whose stream broke
	 * @param outcome {@link Outcome#STREAM_INTERRUPTED} or {@link Outcome#STREAM_STALLED}
	 * @param partial the text the caller received before the failure
	 * @param message what happened, without secrets
	 * @param cause the classified failure underneath, or {@code null}
	 */
	public LlmStreamInterruptedException(String endpoint, Outcome outcome, String partial, String message,
			@Nullable Throwable cause) {
		super(message, endpoint, cause);
		this.outcome = outcome;
		this.partial = partial;
	}

	/**
	 * How the failure is classified.
	 * @return {@link Outcome#STREAM_INTERRUPTED} or {@link Outcome#STREAM_STALLED}
	 */
	public Outcome outcome() {
		return this.outcome;
	}

	/**
	 * The text the caller received before the stream broke.
	 * @return the partial answer, possibly empty when only tool-call deltas had arrived
	 */
	public String partial() {
		return this.partial;
	}

}
