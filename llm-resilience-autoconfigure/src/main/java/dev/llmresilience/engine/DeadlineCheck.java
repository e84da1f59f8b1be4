package dev.llmresilience.engine;

import dev.llmresilience.chat.Outcome;
import org.jspecify.annotations.Nullable;

/**
 * The stage that refuses an attempt once the call's deadline has run out: no call is made that
 * could not end in time. It takes nothing, so gives nothing back.
 */
final class DeadlineCheck implements AttemptStage {

	static final DeadlineCheck STAGE = new DeadlineCheck();

	private DeadlineCheck() {
	}

	@Override
	public @Nullable Throwable admit(EndpointAttempt attempt, long now) {
		EndpointCall call = attempt.call();
		if (now < call.context().deadlineNanos()) {
			return null;
		}
		return call.time()
			.upstream(Outcome.DEADLINE_EXCEEDED, "The call's deadline ran out before this attempt could start");
	}

	@Override
	public void release(EndpointAttempt attempt, End end, long now) {
	}

}
