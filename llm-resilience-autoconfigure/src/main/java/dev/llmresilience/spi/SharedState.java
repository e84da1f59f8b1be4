package dev.llmresilience.spi;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Collection;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

/**
 * The state the replicas of an application share ({@code llm.shared-state.type}): where it stands,
 * and the shared counterparts of the breakers, the call-volume guard's counter, the budget's ledger
 * and the deferred store. {@link #LOCAL} shares nothing: each of those is this instance's own.
 */
public interface SharedState {

	/** Nothing shared. */
	SharedState LOCAL = () -> SharedStateStatus.LOCAL;

	/**
	 * Where the shared state stands now. Never blocks.
	 * @return the status
	 */
	SharedStateStatus status();

	/**
	 * The call-volume guard's counter.
	 * @param maxCalls calls allowed per window
	 * @param window the window's length
	 * @return the fleet's counter, or {@code null} for this instance's own
	 */
	default @Nullable CallCounter callCounter(int maxCalls, Duration window) {
		return null;
	}

	/**
	 * The budget's ledger.
	 * @param maxCostPerDay the budget (0 = none)
	 * @return the fleet's ledger, or {@code null} for this instance's own
	 */
	default @Nullable SpendLedger spendLedger(BigDecimal maxCostPerDay) {
		return null;
	}

	/**
	 * The deferred queue's store.
	 * @param retention how long an ended request's outcome is kept
	 * @return the fleet's store, or {@code null} for this instance's own
	 */
	default @Nullable DeferredStore deferredStore(Duration retention) {
		return null;
	}

	/**
	 * Share the endpoints' breakers, and move them by hand.
	 * @param breakers the circuit breakers of every endpoint, each named after its endpoint
	 * @return how a breaker is moved by hand: on every replica when shared
	 */
	default BreakerControl breakers(Collection<CircuitBreaker> breakers) {
		return BreakerControl.LOCAL;
	}

}
