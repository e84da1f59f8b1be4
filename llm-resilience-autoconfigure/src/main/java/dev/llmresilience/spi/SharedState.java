package dev.llmresilience.spi;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Collection;
import java.util.function.BiConsumer;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

/**
 * The state the replicas of an application share ({@code llm.shared-state.type}): where it stands,
 * and the shared counterparts of the breakers, the call-volume guard's counter, the budget's ledger,
 * the deferred store and what is known of the providers' rate limits. {@link #LOCAL} shares nothing: each of those is this instance's own.
 */
public interface SharedState {

	/** Nothing shared. */
	SharedState LOCAL = () -> Status.LOCAL;

	/**
	 * Where the shared state stands now. Never blocks.
	 * @return the status
	 */
	Status status();

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
	 * What the replicas tell each other of their providers' rate limits.
	 * @return the fleet's share, or {@link CapacityShare#LOCAL}
	 */
	default CapacityShare capacity() {
		return CapacityShare.LOCAL;
	}

	/**
	 * Share the endpoints' breakers, and move them by hand.
	 * @param breakers the circuit breakers of every endpoint, each named after its endpoint
	 * @return how a breaker is moved by hand: on every replica when shared
	 */
	default BreakerControl breakers(Collection<CircuitBreaker> breakers) {
		return BreakerControl.LOCAL;
	}

	/**
	 * Where the shared state stands, as the {@code llm} health contributor and
	 * {@code /actuator/llmbreakers} show it.
	 *
	 * @param type {@code local} or {@code redis}
	 * @param available whether the state is shared right now (always true for {@code local})
	 * @param replica this replica's name in the shared state, or {@code null} for {@code local}
	 * @param replicas replicas seen alive at the last heartbeat (1 for {@code local})
	 * @param unavailableSince when sharing stopped, while it is stopped, else {@code null}
	 * @param problem why sharing stopped, while it is stopped, else {@code null}
	 */
	public record Status(String type, boolean available, @Nullable String replica, int replicas,
			@Nullable Instant unavailableSince, @Nullable String problem) {

		/** Nothing shared: this instance keeps its own state. */
		public static final Status LOCAL = new Status("local", true, null, 1, null, null);

	}

	/**
	 * Counts the upstream calls of the call-volume guard's window and decides, on the caller's thread
	 * and without waiting on anything remote, whether one more may go ahead. {@code CallVolumeGuard}
	 * uses a local counter unless it is given another; {@code llm.shared-state.type=redis} gives it one
	 * that counts the whole fleet's calls.
	 */
	public interface CallCounter {

		/**
		 * Take one permit. Must not block.
		 * @return true if the call may go ahead
		 */
		boolean tryAcquire();

		/**
		 * Take a number of permits at once (a call's estimated tokens, for a counter of tokens). Must not
		 * block. The default takes one only: a counter of calls counts them one at a time.
		 * @param permits the permits, at least 1
		 * @return true if the call may go ahead
		 * @throws UnsupportedOperationException for more than one, unless the counter counts weights
		 */
		default boolean tryAcquire(int permits) {
			if (permits == 1) {
				return tryAcquire();
			}
			throw new UnsupportedOperationException(getClass().getName() + " takes one permit at a time");
		}

		/**
		 * Correct what was taken by what it really cost: a call's reported tokens against its estimate.
		 * A positive difference is counted as used; a negative one is given back to the window. Must not
		 * block. The default ignores it.
		 * @param difference what was used less what was taken
		 */
		default void settle(int difference) {
		}

		/**
		 * Calls made in the current window (the fleet's, for a shared counter, as last reconciled).
		 * @return the count
		 */
		int callsThisWindow();

		/**
		 * Whether the current window is spent, so that calls are being refused.
		 * @return true if no more calls are allowed in this window
		 */
		boolean isExhausted();

	}

	/**
	 * Adds up what each day's answers cost, for {@code BudgetGuard}. The default keeps this instance's
	 * spending; {@code llm.shared-state.type=redis} gives one that adds up the whole fleet's. Neither
	 * method may block: both are called on the call path.
	 */
	public interface SpendLedger {

		/**
		 * Add the cost of an answer to a day.
		 * @param day the day, in the budget's zone
		 * @param cost the cost
		 * @return what the day has cost so far, this answer included, as far as known now
		 */
		BigDecimal add(LocalDate day, BigDecimal cost);

		/**
		 * What a day has cost so far.
		 * @param day the day, in the budget's zone
		 * @return the amount, as far as known now
		 */
		BigDecimal spent(LocalDate day);

		/**
		 * A ledger of this instance's spending, which keeps the current day only.
		 * @return a new ledger
		 */
		static SpendLedger local() {
			return new LocalSpendLedger();
		}

	}

	/**
	 * What the replicas of an application tell each other of their providers' rate limits (a
	 * provider's limit is its API key's, not a replica's): an endpoint that cannot take calls until a
	 * time (a 429, or headers saying a window is empty), and the count of a configured
	 * {@code rate-limits.requests-per-minute}. {@link #LOCAL} tells nobody: each replica keeps its own.
	 * No method may block: they are called on the call path.
	 */
	interface CapacityShare {

		/** Nothing shared: each replica counts its own calls and learns of a 429 only by receiving one. */
		CapacityShare LOCAL = new CapacityShare() {

			@Override
			public void emptied(String endpoint, Instant until) {
			}

			@Override
			public void onEmptied(BiConsumer<String, Instant> listener) {
			}

		};

		/**
		 * This replica learned that an endpoint's provider takes no calls until a time: tell the fleet.
		 * @param endpoint the endpoint's name
		 * @param until when it takes calls again
		 */
		void emptied(String endpoint, Instant until);

		/**
		 * Hear what other replicas learned.
		 * @param listener given the endpoint's name and when it takes calls again
		 */
		void onEmptied(BiConsumer<String, Instant> listener);

		/**
		 * The fleet's count of an endpoint's configured requests per minute, in windows aligned to the
		 * clock's minutes.
		 * @param endpoint the endpoint's name
		 * @param limit requests per minute, fleet-wide
		 * @return the fleet's counter, or {@code null} for this replica's own count
		 */
		default @Nullable CallCounter requestsPerMinute(String endpoint, int limit) {
			return null;
		}

		/**
		 * The fleet's count of an endpoint's configured tokens per minute, in windows aligned to the
		 * clock's minutes: a call takes its estimated tokens ({@link CallCounter#tryAcquire(int)}) and
		 * settles them by the usage its answer reports ({@link CallCounter#settle(int)}).
		 * @param endpoint the endpoint's name
		 * @param limit tokens per minute, fleet-wide
		 * @return the fleet's counter, or {@code null} for this replica's own count
		 */
		default @Nullable CallCounter tokensPerMinute(String endpoint, int limit) {
			return null;
		}

	}

}
