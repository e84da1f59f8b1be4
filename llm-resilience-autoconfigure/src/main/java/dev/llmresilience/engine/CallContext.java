package dev.llmresilience.engine;

import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.protocol.Completion;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What one gateway call shares with the endpoints it tries. Times are on Reactor's parallel
 * scheduler's clock, in nanoseconds ({@link Long#MAX_VALUE} for none).
 *
 * @param onAttempt receives every attempt, made or refused, as it ends (not when cancelled, unless
 * it lost a race), with its completion when it succeeded; called before the answer travels on, so
 * that it hears of every attempt the breaker recorded, even one whose caller let go of the answer as
 * it came
 * @param parent the observation of the gateway call, or {@code null} for none
 * @param deadlineNanos when the call's deadline runs out: it bounds a chat attempt whole and a
 * stream until its first token (each attempt's timeouts are capped at it)
 * @param streamDeadlineNanos when a stream must have ended once tokens flow (the request's own
 * deadline), or {@link Long#MAX_VALUE}
 * @param guard the call-volume guard every upstream attempt takes a permit from
 * @param laterEndpointAvailable whether a later endpoint of the route would take the call now;
 * while one would, a first-token timeout is not retried on the same endpoint
 * @param race the race this call's attempts run in (a hedged request), or {@link Race#NONE}
 * @param released whether the call comes to this endpoint because an earlier one's opening breaker
 * released it: then it may wait for a slot of this endpoint's bulkhead ({@code released-calls-wait})
 * @param promptSize the request's prompt-size bucket ({@link PromptSizeTimes#bucket(long)}), which its
 * first-token time is recorded in too, or {@link PromptSizeTimes#NONE}
 */
record CallContext(BiConsumer<Attempt, @Nullable Completion> onAttempt, @Nullable Observation parent,
		long deadlineNanos, long streamDeadlineNanos, CallVolumeGuard guard, BooleanSupplier laterEndpointAvailable,
		Race race, boolean released, int promptSize) {

	/**
	 * A context that runs in no race, of no known prompt size.
	 * @param onAttempt receives every attempt
	 * @param parent the observation of the gateway call, or {@code null}
	 * @param deadlineNanos when the call's deadline runs out
	 * @param streamDeadlineNanos when a stream must have ended once tokens flow
	 * @param guard the call-volume guard
	 * @param laterEndpointAvailable whether a later endpoint of the route would take the call now
	 */
	public CallContext(BiConsumer<Attempt, @Nullable Completion> onAttempt, @Nullable Observation parent,
			long deadlineNanos, long streamDeadlineNanos, CallVolumeGuard guard, BooleanSupplier laterEndpointAvailable) {
		this(onAttempt, parent, deadlineNanos, streamDeadlineNanos, guard, laterEndpointAvailable, Race.NONE, false,
				PromptSizeTimes.NONE);
	}

	/**
	 * A context with no observation, no deadline, no guard and no later endpoint.
	 * @param onAttempt receives every attempt
	 * @return the context
	 */
	public static CallContext of(Consumer<Attempt> onAttempt) {
		return of(onAttempt, CallVolumeGuard.off());
	}

	/**
	 * A context with no observation, no deadline and no later endpoint.
	 * @param onAttempt receives every attempt
	 * @param guard the call-volume guard
	 * @return the context
	 */
	public static CallContext of(Consumer<Attempt> onAttempt, CallVolumeGuard guard) {
		return new CallContext((attempt, completion) -> onAttempt.accept(attempt), null, Long.MAX_VALUE, Long.MAX_VALUE,
				guard, () -> false);
	}

	/**
	 * The same request sent to two endpoints at once (a hedged request): the first attempt to bring
	 * a token wins, and the other side is cancelled as the loser.
	 */
	public interface Race {

		/** No race: every first token wins. */
		Race NONE = new Race() {

			@Override
			public boolean firstToken() {
				return true;
			}

			@Override
			public boolean lost() {
				return false;
			}

		};

		/**
		 * Told by an attempt when its first token has come.
		 * @return true if this side won (or runs in no race); false if the other side had already
		 * won, and this one is about to be cancelled
		 */
		boolean firstToken();

		/**
		 * Whether this side lost, so that its cancelled attempt counts as a lost race rather than a
		 * caller's cancel.
		 * @return true once the other side won
		 */
		boolean lost();

	}

}
