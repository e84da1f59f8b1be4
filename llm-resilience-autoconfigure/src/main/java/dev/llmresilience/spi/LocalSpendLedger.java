package dev.llmresilience.spi;

import java.math.BigDecimal;
import java.time.LocalDate;

import dev.llmresilience.spi.SharedState.SpendLedger;
import org.jspecify.annotations.Nullable;

/** This instance's spending, for the latest day it has seen. */
final class LocalSpendLedger implements SpendLedger {

	private @Nullable LocalDate day;

	private BigDecimal spent = BigDecimal.ZERO;

	@Override
	public synchronized BigDecimal add(LocalDate day, BigDecimal cost) {
		this.spent = spent(day).add(cost);
		return this.spent;
	}

	@Override
	public synchronized BigDecimal spent(LocalDate day) {
		if (!day.equals(this.day)) {
			this.day = day;
			this.spent = BigDecimal.ZERO;
		}
		return this.spent;
	}

}
