package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.Completion;
import org.jspecify.annotations.Nullable;

/**
 * The stage that tells the gateway call of every attempt, made or refused, as it ends (through
 * {@link CallContext#onAttempt()}): first to admit, so last to be released, when the breaker has
 * recorded the attempt and its observation has stopped. A cancelled attempt is not told, unless it
 * lost a hedged request's race.
 */
final class AttemptReport implements AttemptStage {

	static final AttemptReport STAGE = new AttemptReport();

	private AttemptReport() {
	}

	@Override
	public @Nullable Throwable admit(EndpointAttempt attempt, long now) {
		return null;
	}

	@Override
	public void release(EndpointAttempt attempt, End end, long now) {
		CallContext context = attempt.call().context();
		String name = attempt.name();
		switch (end) {
			case REFUSED -> context.onAttempt().accept(new Attempt(name, attempt.outcome(), Duration.ZERO), null);
			case FINISHED -> {
				Throwable error = attempt.error();
				Completion completion = (error == null) ? attempt.answer().completion() : null;
				context.onAttempt()
					.accept(new Attempt(name, attempt.outcome(), Duration.ofNanos(now - attempt.start())), completion);
				if (error instanceof LlmUpstreamException upstream && AttemptTime.NO_TIME_LEFT.equals(upstream.noRetry())) {
					// the retry the deadline could not fit, refused as the attempt it would have been
					context.onAttempt().accept(new Attempt(name, Outcome.DEADLINE_EXCEEDED, Duration.ZERO), null);
				}
			}
			case LOST -> context.onAttempt()
				.accept(new Attempt(name, Outcome.HEDGE_LOST, Duration.ofNanos(now - attempt.start())), null);
			case CANCELLED -> {
			}
		}
	}

}
