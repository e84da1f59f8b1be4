package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.ZoneId;

import dev.llmresilience.spi.SharedState.CallCounter;
import dev.llmresilience.spi.SharedState.SpendLedger;
import dev.llmresilience.support.MutableClock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guards at their edges, without an application around them: a limit of zero is off whatever
 * counter it is given, a trip is counted each time a window starts refusing, and a budget spent to
 * the last cent is spent.
 */
class GuardEdgeTests {

	@Test
	void callLimitOfZeroAllowsEveryCallEvenOverACounterThatRefuses() {
		SwitchableCounter counter = new SwitchableCounter();
		counter.permits = false;
		CallVolumeGuard guard = new CallVolumeGuard(0, counter);
		assertThat(guard.tryAcquire()).isTrue();
		assertThat(guard.isTripped()).isFalse();
		assertThat(guard.trips()).isZero();
	}

	@Test
	void eachWindowThatStartsRefusingCountsOneTrip() {
		SwitchableCounter counter = new SwitchableCounter();
		CallVolumeGuard guard = new CallVolumeGuard(5, counter);
		assertThat(guard.tryAcquire()).isTrue();
		counter.permits = false;
		for (int i = 0; i < 3; i++) {
			assertThat(guard.tryAcquire()).isFalse();
		}
		assertThat(guard.trips()).as("one trip however many refusals in the window").isOne();
		counter.permits = true;
		assertThat(guard.tryAcquire()).isTrue();
		counter.permits = false;
		assertThat(guard.tryAcquire()).isFalse();
		assertThat(guard.trips()).as("the next window spent is a second trip").isEqualTo(2);
	}

	@Test
	void budgetSpentExactlyToItsCapIsTrippedAndCountedOnce() {
		MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");
		BudgetGuard budget = new BudgetGuard(new BigDecimal("1.00"), clock, ZoneId.of("UTC"), SpendLedger.local());
		budget.record(new BigDecimal("0.40"));
		assertThat(budget.isTripped()).isFalse();
		budget.record(new BigDecimal("0.60"));
		assertThat(budget.spentToday()).isEqualByComparingTo("1.00");
		assertThat(budget.isTripped()).isTrue();
		assertThat(budget.trips()).isOne();
		budget.record(new BigDecimal("0.10"));
		assertThat(budget.trips()).as("the same day spent again is the same trip").isOne();
	}

	/** A counter that permits or refuses as the test says. */
	static final class SwitchableCounter implements CallCounter {

		volatile boolean permits = true;

		@Override
		public boolean tryAcquire() {
			return this.permits;
		}

		@Override
		public int callsThisWindow() {
			return 0;
		}

		@Override
		public boolean isExhausted() {
			return !this.permits;
		}

	}

}
