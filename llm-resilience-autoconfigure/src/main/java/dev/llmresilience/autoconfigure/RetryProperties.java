package dev.llmresilience.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * Retry settings of an endpoint ({@code retry.*} under {@code llm.defaults} or
 * {@code llm.endpoints.<name>}).
 */
public class RetryProperties {

	/** Attempts on one endpoint in all, the first included; 1 disables retries. Default 3. */
	private @Nullable Integer maxAttempts;

	/** Wait before the first retry. Default 500ms. */
	private @Nullable Duration initialBackoff;

	/** Factor applied to the wait after each retry. Default 2.0. */
	private @Nullable Double multiplier;

	/** Longest wait between two attempts. Default 8s. */
	private @Nullable Duration maxBackoff;

	/** Random spread applied to each wait, as a fraction (0.25 = +/- 25 %), from 0 to 1. Default 0.25. */
	private @Nullable Double jitter;

	/**
	 * Longest Retry-After (or retry-after-ms) worth waiting for; a 429 that asks for longer is not
	 * retried on this endpoint and the gateway falls back at once. Default 10s.
	 */
	private @Nullable Duration maxRetryAfter;

	/**
	 * Retries at most this percentage of the endpoint's calls over a sliding minute (plus
	 * budget-min-per-second); past it a failure goes straight to the route's next endpoint, so that
	 * retries never multiply an overloaded provider's load. Counted per replica. Default 20.
	 */
	private @Nullable Float budget;

	/**
	 * Retries a second allowed beyond the budget, so that an endpoint with little traffic (a lone
	 * call) still gets its attempts. Default 3.
	 */
	private @Nullable Integer budgetMinPerSecond;

	public @Nullable Float getBudget() {
		return this.budget;
	}

	public void setBudget(@Nullable Float budget) {
		this.budget = budget;
	}

	public @Nullable Integer getBudgetMinPerSecond() {
		return this.budgetMinPerSecond;
	}

	public void setBudgetMinPerSecond(@Nullable Integer budgetMinPerSecond) {
		this.budgetMinPerSecond = budgetMinPerSecond;
	}

	public @Nullable Integer getMaxAttempts() {
		return this.maxAttempts;
	}

	public void setMaxAttempts(@Nullable Integer maxAttempts) {
		this.maxAttempts = maxAttempts;
	}

	public @Nullable Duration getInitialBackoff() {
		return this.initialBackoff;
	}

	public void setInitialBackoff(@Nullable Duration initialBackoff) {
		this.initialBackoff = initialBackoff;
	}

	public @Nullable Double getMultiplier() {
		return this.multiplier;
	}

	public void setMultiplier(@Nullable Double multiplier) {
		this.multiplier = multiplier;
	}

	public @Nullable Duration getMaxBackoff() {
		return this.maxBackoff;
	}

	public void setMaxBackoff(@Nullable Duration maxBackoff) {
		this.maxBackoff = maxBackoff;
	}

	public @Nullable Double getJitter() {
		return this.jitter;
	}

	public void setJitter(@Nullable Double jitter) {
		this.jitter = jitter;
	}

	public @Nullable Duration getMaxRetryAfter() {
		return this.maxRetryAfter;
	}

	public void setMaxRetryAfter(@Nullable Duration maxRetryAfter) {
		this.maxRetryAfter = maxRetryAfter;
	}

}
