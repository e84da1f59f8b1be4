package dev.llmresilience.endpoint;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.guard.CallVolumeGuard;
import dev.llmresilience.protocol.Completion;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What one gateway call shares with the endpoints it tries.
 *
 * @param onAttempt receives every attempt, made or refused, as it ends (not when cancelled), with its
 * completion when it succeeded; called before the answer travels on, so that it hears of every
 * attempt the breaker recorded, even one whose caller let go of the answer as it came
 * @param parent the observation of the gateway call, or {@code null} for none
 * @param deadlineNanos when the gateway call must end, on Reactor's parallel scheduler's clock
 * ({@link Long#MAX_VALUE} for none)
 * @param guard the call-volume guard every upstream attempt takes a permit from
 * @param started attempts started so far in the gateway call, across its endpoints
 */
public record CallContext(BiConsumer<Attempt, @Nullable Completion> onAttempt, @Nullable Observation parent,
		long deadlineNanos, CallVolumeGuard guard, AtomicInteger started) {

	/**
	 * A context with no observation, no deadline and no guard.
	 * @param onAttempt receives every attempt
	 * @return the context
	 */
	public static CallContext of(Consumer<Attempt> onAttempt) {
		return new CallContext((attempt, completion) -> onAttempt.accept(attempt), null, Long.MAX_VALUE,
				CallVolumeGuard.off(), new AtomicInteger());
	}

}
