package dev.llmresilience.spi;

import java.time.Instant;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import org.jspecify.annotations.Nullable;

/**
 * A deferred request and where it stands.
 *
 * @param ticket its unguessable ticket
 * @param request the request
 * @param state where it stands
 * @param attempts background attempts made so far
 * @param response the answer once completed
 * @param reason why it failed, once failed
 * @param createdAt when it was deferred
 * @param updatedAt when it last changed
 */
public record DeferredEntry(String ticket, ChatRequest request, DeferredResult.State state, int attempts,
		@Nullable ChatResponse response, @Nullable String reason, Instant createdAt, Instant updatedAt) {

	/**
	 * This entry with one more attempt begun.
	 * @param now the time
	 * @return the entry
	 */
	public DeferredEntry attempted(Instant now) {
		return new DeferredEntry(this.ticket, this.request, this.state, this.attempts + 1, null, null, this.createdAt,
				now);
	}

	/**
	 * This entry answered.
	 * @param response the answer
	 * @param now the time
	 * @return the entry
	 */
	public DeferredEntry completed(ChatResponse response, Instant now) {
		return new DeferredEntry(this.ticket, this.request, DeferredResult.State.COMPLETED, this.attempts, response,
				null, this.createdAt, now);
	}

	/**
	 * This entry given up on.
	 * @param reason why
	 * @param now the time
	 * @return the entry
	 */
	public DeferredEntry failed(String reason, Instant now) {
		return new DeferredEntry(this.ticket, this.request, DeferredResult.State.FAILED, this.attempts, null, reason,
				this.createdAt, now);
	}

	/**
	 * This entry as the gateway reports it.
	 * @param durable whether the store keeps it where it outlives this instance
	 * @return the result
	 */
	public DeferredResult toResult(boolean durable) {
		return new DeferredResult(this.ticket, this.state, this.response, this.reason, durable);
	}

	@Override
	public String toString() {
		// No ticket: it is a bearer token for the answer, and a toString ends up in logs.
		return "DeferredEntry[state=" + this.state + ", attempts=" + this.attempts + ", createdAt=" + this.createdAt
				+ "]";
	}

}
