package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneId;

import dev.llmresilience.spi.SharedState.SpendLedger;
import org.jspecify.annotations.Nullable;

/**
 * A daily spending cap: once the cost of the day's answers reaches {@code max-cost-per-day}, the
 * gateway stops calling upstream (BUSY, or DEFERRED for deferrable requests) until the day rolls
 * over in the configured time zone. The day's spending is kept by a {@link SpendLedger}: this
 * instance's by default, the fleet's when shared.
 */
final class BudgetGuard {

	private final BigDecimal maxCostPerDay;

	private final Clock clock;

	private final ZoneId zone;

	private final SpendLedger ledger;

	private @Nullable LocalDate trippedOn;

	private long trips;

	/**
	 * Create a guard over this instance's spending.
	 * @param maxCostPerDay the cap; zero switches the guard off
	 * @param clock the clock
	 * @param zone the zone in which a day starts
	 */
	public BudgetGuard(BigDecimal maxCostPerDay, Clock clock, ZoneId zone) {
		this(maxCostPerDay, clock, zone, SpendLedger.local());
	}

	/**
	 * Create a guard over a ledger.
	 * @param maxCostPerDay the cap; zero switches the guard off
	 * @param clock the clock
	 * @param zone the zone in which a day starts
	 * @param ledger where the day's spending is added up
	 */
	public BudgetGuard(BigDecimal maxCostPerDay, Clock clock, ZoneId zone, SpendLedger ledger) {
		this.maxCostPerDay = maxCostPerDay;
		this.clock = clock;
		this.zone = zone;
		this.ledger = ledger;
	}

	/**
	 * A guard that never trips (spending is still added up).
	 * @param clock the clock
	 * @return the guard
	 */
	public static BudgetGuard off(Clock clock) {
		return new BudgetGuard(BigDecimal.ZERO, clock, ZoneId.of("UTC"));
	}

	/**
	 * Add the cost of an answer.
	 * @param cost the cost
	 */
	public void record(BigDecimal cost) {
		LocalDate today = today();
		BigDecimal spent = this.ledger.add(today, cost);
		if (isOn() && spent.compareTo(this.maxCostPerDay) >= 0) {
			synchronized (this) {
				if (!today.equals(this.trippedOn)) {
					this.trippedOn = today;
					this.trips++;
				}
			}
		}
	}

	/**
	 * Whether today's budget is spent.
	 * @return true if no more upstream calls should be made today
	 */
	public boolean isTripped() {
		return isOn() && spentToday().compareTo(this.maxCostPerDay) >= 0;
	}

	/**
	 * What today's answers cost so far.
	 * @return the amount
	 */
	public BigDecimal spentToday() {
		return this.ledger.spent(today());
	}

	/**
	 * The cap.
	 * @return the cap; zero when off
	 */
	public BigDecimal maxCostPerDay() {
		return this.maxCostPerDay;
	}

	/**
	 * How many times the budget has been spent.
	 * @return the count of trips
	 */
	public synchronized long trips() {
		return this.trips;
	}

	private boolean isOn() {
		return this.maxCostPerDay.signum() > 0;
	}

	private LocalDate today() {
		return LocalDate.ofInstant(this.clock.instant(), this.zone);
	}

}
