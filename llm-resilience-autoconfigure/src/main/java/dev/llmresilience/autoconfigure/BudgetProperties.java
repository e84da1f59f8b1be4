package dev.llmresilience.autoconfigure;

import java.math.BigDecimal;
import java.time.ZoneId;

/** The daily budget, {@code llm.gateway.budget}: a cap on the cost of answers per day. */
public class BudgetProperties {

	/**
	 * Cost of answers allowed per day, in the currency of the endpoints' prices; once spent,
	 * calls get BUSY (DEFERRED if deferrable) until the day rolls over. 0 switches it off.
	 */
	private BigDecimal maxCostPerDay = BigDecimal.ZERO;

	/** Time zone in which a budget day starts. */
	private ZoneId zone = ZoneId.of("UTC");

	public BigDecimal getMaxCostPerDay() {
		return this.maxCostPerDay;
	}

	public void setMaxCostPerDay(BigDecimal maxCostPerDay) {
		this.maxCostPerDay = maxCostPerDay;
	}

	public ZoneId getZone() {
		return this.zone;
	}

	public void setZone(ZoneId zone) {
		this.zone = zone;
	}

}
