package dev.llmresilience.engine;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import org.jspecify.annotations.Nullable;

/**
 * The stage that takes a slot of the endpoint's bulkhead for an attempt (refused when none is
 * free, never waiting; a call released by another endpoint's breaker may have taken one for it while
 * it waited, see {@link EndpointCall}) and gives it back on every end.
 */
final class BulkheadSlot implements AttemptStage {

	static final BulkheadSlot STAGE = new BulkheadSlot();

	private BulkheadSlot() {
	}

	@Override
	public @Nullable Throwable admit(EndpointAttempt attempt, long now) {
		if (attempt.call().takeHeldSlot()) {
			return null;
		}
		Bulkhead bulkhead = attempt.endpoint().bulkhead();
		return bulkhead.tryAcquirePermission() ? null : BulkheadFullException.createBulkheadFullException(bulkhead);
	}

	@Override
	public void release(EndpointAttempt attempt, End end, long now) {
		attempt.endpoint().bulkhead().onComplete();
	}

}
