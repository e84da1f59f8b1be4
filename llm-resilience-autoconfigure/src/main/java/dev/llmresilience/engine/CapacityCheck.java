package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import org.jspecify.annotations.Nullable;

/**
 * The stage that sends no attempt into a rate limit the endpoint knows is spent
 * ({@link EndpointCapacity}): refused before the breaker is asked, so that it is no breaker failure
 * and takes no half-open permit, as {@link Outcome#CAPACITY_EXHAUSTED}, which goes on to the
 * route's next endpoint. At the attempt's end, a 429 empties the endpoint's capacity until its
 * reset, and an answer's reported usage corrects the tokens its estimate reserved.
 */
final class CapacityCheck implements AttemptStage {

	static final CapacityCheck STAGE = new CapacityCheck();

	private CapacityCheck() {
	}

	@Override
	public @Nullable Throwable admit(EndpointAttempt attempt, long now) {
		LlmEndpoint endpoint = attempt.endpoint();
		long taken = endpoint.capacity().take(attempt.call().request(), now);
		if (taken >= 0) {
			attempt.reservedTokens = taken;
			return null;
		}
		endpoint.routedAway();
		Duration reset = Duration.ofNanos(-1 - taken);
		return new LlmUpstreamException(endpoint.name(), Outcome.CAPACITY_EXHAUSTED, 0, null,
				"Not sent: the provider's known rate limit of endpoint '" + endpoint.name()
						+ "' cannot take the call before its reset in " + reset.toMillis() + "ms",
				null);
	}

	@Override
	public void release(EndpointAttempt attempt, End end, long now) {
		if (end != End.FINISHED) {
			return;
		}
		Outcome outcome = attempt.outcome();
		if (outcome == Outcome.RATE_LIMITED) {
			Throwable error = attempt.error();
			attempt.endpoint()
				.capacity()
				.rateLimited((error instanceof LlmUpstreamException upstream) ? upstream.retryAfter() : null, now);
		}
		else if (outcome == Outcome.SUCCESS && attempt.reservedTokens > 0) {
			attempt.endpoint().capacity().used(attempt.reservedTokens, attempt.answer().usage());
		}
	}

}
