package dev.llmresilience.engine;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Priority;
import dev.llmresilience.failure.LlmUpstreamException;
import org.jspecify.annotations.Nullable;

/**
 * The stage that keeps batch calls within the endpoint's {@link BatchShare}: a batch call past it
 * is refused before the rate limit, the breaker and the bulkhead are asked, so that it is no
 * breaker failure, takes nothing of theirs and goes on to the route's next endpoint as
 * {@link Outcome#CAPACITY_EXHAUSTED} (then defers if deferrable, else is BUSY). An interactive
 * call passes without a count. A batch call taken is counted until its attempt ends, whatever the
 * end.
 */
final class BatchAdmission implements AttemptStage {

	static final BatchAdmission STAGE = new BatchAdmission();

	private BatchAdmission() {
	}

	@Override
	public @Nullable Throwable admit(EndpointAttempt attempt, long now) {
		if (attempt.call().request().priority() != Priority.BATCH) {
			return null;
		}
		LlmEndpoint endpoint = attempt.endpoint();
		BatchShare share = endpoint.batchShare();
		BatchShare.Limit refused = share.take(endpoint.capacity(), endpoint.bulkhead(), now);
		if (refused == null) {
			attempt.batchCounted = true;
			return null;
		}
		String limit = (refused.basis() == BatchShare.Basis.RATE_LIMIT)
				? refused.remaining() + " of its rate limit's " + (refused.calls() + refused.reserve())
						+ " requests are left, and the last " + refused.reserve() + " are kept for interactive calls"
				: refused.calls() + " batch calls are in flight, its share of bulkhead.max-concurrent-calls";
		return new LlmUpstreamException(endpoint.name(), Outcome.CAPACITY_EXHAUSTED, 0, null,
				"Not sent: a batch call may use at most llm.gateway.batch-share (" + share.share() + ") of endpoint '"
						+ endpoint.name() + "', and " + limit,
				null);
	}

	@Override
	public void release(EndpointAttempt attempt, End end, long now) {
		if (attempt.batchCounted) {
			attempt.batchCounted = false;
			attempt.endpoint().batchShare().release();
		}
	}

}
