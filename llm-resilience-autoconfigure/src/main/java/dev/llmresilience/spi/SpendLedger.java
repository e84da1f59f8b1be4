package dev.llmresilience.spi;

import java.math.BigDecimal;
import java.time.LocalDate;


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
