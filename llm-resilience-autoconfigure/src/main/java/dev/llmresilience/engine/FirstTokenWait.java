package dev.llmresilience.engine;

import org.jspecify.annotations.Nullable;

/**
 * The stage that keeps an attempt in its endpoint's list of attempts waiting for their first token
 * (see {@link LlmEndpoint#waiting}), from the moment its request is on its way until its first
 * token or its end, so that a breaker that opens meanwhile releases it to the route's next endpoint,
 * and so that the endpoint's {@link HangDetector} sees it wait.
 * It comes after the request is sent: an attempt that ends as it is sent (an answer at hand, a
 * refused send) is never listed.
 */
final class FirstTokenWait implements AttemptStage {

	static final FirstTokenWait STAGE = new FirstTokenWait();

	private FirstTokenWait() {
	}

	@Override
	public @Nullable Throwable admit(EndpointAttempt attempt, long now) {
		if (!attempt.started() && !attempt.ended()) {
			attempt.listedWaiting = true;
			attempt.endpoint().waiting(attempt, true);
			if (attempt.started() || attempt.ended()) {
				// its first token or its end came meanwhile, and may have found it not yet listed
				attempt.endpoint().waiting(attempt, false);
			}
		}
		return null;
	}

	@Override
	public void release(EndpointAttempt attempt, End end, long now) {
		// (an attempt answered as it was sent was never listed: no lookup, which costs a call the
		// attempt's identity hash and a walk of the set)
		if (attempt.listedWaiting) {
			attempt.endpoint().waiting(attempt, false);
		}
	}

}
