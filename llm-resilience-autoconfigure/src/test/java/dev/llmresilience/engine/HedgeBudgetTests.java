package dev.llmresilience.engine;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hedge budget: hedged calls at most {@code max-ratio} of the route's calls in a
 * sliding window, on a clock the test moves.
 */
class HedgeBudgetTests {

	private static final long SECOND = Duration.ofSeconds(1).toNanos();

	@Test
	void tenPercentAllowsOneHedgeInTenCalls() {
		HedgeBudget budget = new HedgeBudget(0.1, 60 * SECOND);
		for (int i = 0; i < 9; i++) {
			budget.recordCall(i * SECOND);
			assertThat(budget.tryAcquire(i * SECOND)).as("call %d", i + 1).isFalse();
		}
		budget.recordCall(9 * SECOND);
		assertThat(budget.tryAcquire(9 * SECOND)).isTrue();
		assertThat(budget.tryAcquire(9 * SECOND)).isFalse();
		for (int i = 10; i < 20; i++) {
			budget.recordCall(i * SECOND);
		}
		assertThat(budget.tryAcquire(19 * SECOND)).isTrue();
		assertThat(budget.hedges(19 * SECOND)).isEqualTo(2);
		assertThat(budget.calls(19 * SECOND)).isEqualTo(20);
	}

	@Test
	void callsAndHedgesLeaveTheWindowAsItSlides() {
		HedgeBudget budget = new HedgeBudget(0.5, 10 * SECOND);
		budget.recordCall(0);
		budget.recordCall(0);
		assertThat(budget.tryAcquire(0)).isTrue();
		assertThat(budget.tryAcquire(0)).isFalse();
		// ten seconds on, the window holds none of them
		assertThat(budget.calls(10 * SECOND)).isZero();
		assertThat(budget.hedges(10 * SECOND)).isZero();
		budget.recordCall(10 * SECOND);
		budget.recordCall(10 * SECOND);
		assertThat(budget.tryAcquire(10 * SECOND)).isTrue();
	}

	@Test
	void zeroNeverHedgesAndOneAlwaysMay() {
		HedgeBudget never = new HedgeBudget(0, 60 * SECOND);
		HedgeBudget always = new HedgeBudget(1, 60 * SECOND);
		never.recordCall(0);
		always.recordCall(0);
		assertThat(never.tryAcquire(0)).isFalse();
		assertThat(always.tryAcquire(0)).isTrue();
	}

}
