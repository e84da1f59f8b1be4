package dev.llmresilience.autoconfigure;

import java.time.Duration;

/**
 * The live dashboard, under {@code llm.dashboard}: one self-contained page at
 * {@code GET /llm/dashboard} that refreshes itself from {@code /actuator/llmbreakers}.
 */
public class DashboardProperties {

	/** Whether GET /llm/dashboard serves the dashboard page. It needs /actuator/llmbreakers exposed over HTTP. */
	private boolean enabled = false;

	/** How often the page reloads /actuator/llmbreakers, from 500ms to 1m. */
	private Duration refresh = Duration.ofSeconds(2);

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getRefresh() {
		return this.refresh;
	}

	public void setRefresh(Duration refresh) {
		this.refresh = refresh;
	}

}
