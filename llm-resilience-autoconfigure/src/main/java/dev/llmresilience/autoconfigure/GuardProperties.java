package dev.llmresilience.autoconfigure;

/** The call-volume guard, {@code llm.gateway.guard}: a cap on upstream attempts per hour. */
public class GuardProperties {

	/**
	 * Upstream attempts allowed per hour over all endpoints (a fixed window, renewed every hour
	 * from start-up); past it calls get BUSY without touching any upstream. 0 switches it off.
	 */
	private int maxCallsPerHour = 0;

	public int getMaxCallsPerHour() {
		return this.maxCallsPerHour;
	}

	public void setMaxCallsPerHour(int maxCallsPerHour) {
		this.maxCallsPerHour = maxCallsPerHour;
	}

}
