package dev.llmresilience.autoconfigure;

/**
 * Settings of the "llm" health contributor, {@code llm.health}.
 */
public class HealthProperties {

	/**
	 * Report DOWN while every endpoint of some route has an open breaker. Off by default: a
	 * provider outage should not take every replica out of the load balancer at once.
	 */
	private boolean downWhenRouteUnavailable = false;

	public boolean isDownWhenRouteUnavailable() {
		return this.downWhenRouteUnavailable;
	}

	public void setDownWhenRouteUnavailable(boolean downWhenRouteUnavailable) {
		this.downWhenRouteUnavailable = downWhenRouteUnavailable;
	}

}
