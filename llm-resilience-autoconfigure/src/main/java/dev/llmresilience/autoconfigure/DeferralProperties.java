package dev.llmresilience.autoconfigure;

import java.time.Duration;

/**
 * The deferred tier, {@code llm.gateway.deferral}: deferrable requests wait in a queue and complete
 * in the background.
 */
public class DeferralProperties {

	/** Whether deferrable requests that nothing can answer now are queued (tier DEFERRED). */
	private boolean enabled = true;

	/** Wait before the first background attempt; each later one waits twice as long as the one before. */
	private Duration delay = Duration.ofMinutes(5);

	/** Background attempts before a deferred request fails. */
	private int maxAttempts = 3;

	/** Deferred requests held at once; past it the answer is BUSY. */
	private int capacity = 1000;

	/** How long the outcome of an ended deferred request can still be fetched by its ticket. */
	private Duration retention = Duration.ofHours(1);

	/**
	 * Ended deferred requests whose outcome (request and answer) the in-memory store keeps at most,
	 * within the retention; past it the oldest is dropped, and its ticket then finds nothing.
	 */
	private int maxRetained = 1000;

	/** The content of a DEFERRED answer. */
	private String message = "Your request is queued and will be answered shortly.";

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getDelay() {
		return this.delay;
	}

	public void setDelay(Duration delay) {
		this.delay = delay;
	}

	public int getMaxAttempts() {
		return this.maxAttempts;
	}

	public void setMaxAttempts(int maxAttempts) {
		this.maxAttempts = maxAttempts;
	}

	public int getCapacity() {
		return this.capacity;
	}

	public void setCapacity(int capacity) {
		this.capacity = capacity;
	}

	public Duration getRetention() {
		return this.retention;
	}

	public void setRetention(Duration retention) {
		this.retention = retention;
	}

	public int getMaxRetained() {
		return this.maxRetained;
	}

	public void setMaxRetained(int maxRetained) {
		this.maxRetained = maxRetained;
	}

	public String getMessage() {
		return this.message;
	}

	public void setMessage(String message) {
		this.message = message;
	}

}
