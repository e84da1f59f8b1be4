package dev.llmresilience.guard;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.LocalDate;
import java.time.ZoneId;

/**
 * A daily spending cap: once the cost of the day's answers reaches {@code max-cost-per-day}, the
 * gateway stops calling upstream (BUSY, or DEFERRED for deferrable requests) until the day rolls
 * over in the configured time zone.
 */
public final class BudgetGuard {

	private final BigDecimal maxCostPerDay;

	private final Clock clock;

	private final ZoneId zone;

	private LocalDate day;

	private BigDecimal spent = BigDecimal.ZERO;

	private boolean tripped;

	private long trips;

	/**
	 * Create a guard.
	 * @param maxCostPerDay the cap; zero switches the guard off
	 * @param clock the clock
	 * @param zone the zone in which a day starts
	 */
	public BudgetGuard(BigDecimal maxCostPerDay, Clock clock, ZoneId zone) {
		this.maxCostPerDay = maxCostPerDay;
		this.clock = clock;
		this.zone = zone;
		this.day = today();
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
	public synchronized void record(BigDecimal cost) {
		rollOver();
		this.spent = this.spent.add(cost);
		if (isOn() && !this.tripped && this.spent.compareTo(this.maxCostPerDay) >= 0) {
			this.tripped = true;
			this.trips++;
		}
	}

	/**
	 * Whether today's budget is spent.
	 * @return true if no more upstream calls should be made today
	 */
	public boolean isTripped() {
		if (!isOn()) {
			// off: never tripped, and every call asks, so no lock and no clock
			return false;
		}
		synchronized (this) {
			rollOver();
			return this.tripped;
		}
	}

	/**
	 * What today's answers cost so far.
	 * @return the amount
	 */
	public synchronized BigDecimal spentToday() {
		rollOver();
		return this.spent;
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

	private void rollOver() {
		LocalDate today = today();
		if (!today.equals(this.day)) {
			this.day = today;
			this.spent = BigDecimal.ZERO;
			this.tripped = false;
		}
	}

	private LocalDate today() {
		return LocalDate.ofInstant(this.clock.instant(), this.zone);
	}

}
