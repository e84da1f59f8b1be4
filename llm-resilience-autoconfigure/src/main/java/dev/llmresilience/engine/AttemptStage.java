package dev.llmresilience.engine;

import org.jspecify.annotations.Nullable;

/**
 * One concern of an attempt on an endpoint: what it takes before the request goes upstream (a
 * permit, a slot, an observation) or refuses it for, and what it gives back and records as the
 * attempt ends. {@link EndpointAttempt#STAGES} lists the stages in the order they admit an
 * attempt; an attempt's end releases the stages it passed in the reverse order, exactly once. A
 * stage keeps nothing of its own: what it took for an attempt is kept in the attempt's fields, so
 * one instance serves every call and no call allocates a stage.
 */
interface AttemptStage {

	/** How an attempt ended, as the stages it passed see it. */
	enum End {

		/** A later stage refused the attempt: no call was made. */
		REFUSED,

		/** The attempt came to an end of its own (a normal end, a classified failure, a bound expired). */
		FINISHED,

		/** The caller let go of the attempt before it ended: nothing to record. */
		CANCELLED,

		/** The other side of a hedged request won: a slow call, whatever its real length. */
		LOST

	}

	/**
	 * Take this stage's part in an attempt, or refuse it.
	 * @param attempt the attempt, which keeps what the stage takes
	 * @param now the scheduler's time, the same for every stage
	 * @return {@code null} when admitted, else the error the attempt is refused with (its outcome
	 * is {@link dev.llmresilience.failure.FailureClassifier#outcomeOf(Throwable)})
	 */
	@Nullable Throwable admit(EndpointAttempt attempt, long now);

	/**
	 * Give back what {@link #admit} took, and record what the end means, once per attempt.
	 * @param attempt the attempt; {@link EndpointAttempt#outcome()} and
	 * {@link EndpointAttempt#error()} say how it ended for {@link End#REFUSED} and
	 * {@link End#FINISHED}
	 * @param end how it ended
	 * @param now the scheduler's time, the same for every stage
	 */
	void release(EndpointAttempt attempt, End end, long now);

}
