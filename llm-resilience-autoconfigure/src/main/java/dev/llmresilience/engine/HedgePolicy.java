package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import dev.llmresilience.gateway.LlmGatewayListener.HedgeOutcome;
import reactor.core.scheduler.Schedulers;

/**
 * The hedging of one route: its settings, its budget and what its hedges came to. Time is the
 * parallel scheduler's clock, so that tests move it virtually.
 */
final class HedgePolicy {

	private final String route;

	private final HedgeSettings settings;

	private final HedgeBudget budget;

	private final LongAdder[] outcomes = new LongAdder[HedgeOutcome.values().length];

	HedgePolicy(String route, HedgeSettings settings) {
		this.route = route;
		this.settings = settings;
		this.budget = new HedgeBudget(settings.maxRatio(), settings.window().toNanos());
		for (int i = 0; i < this.outcomes.length; i++) {
			this.outcomes[i] = new LongAdder();
		}
	}

	String route() {
		return this.route;
	}

	HedgeSettings settings() {
		return this.settings;
	}

	/** One more call on the route: the budget is a share of them. */
	void recordCall() {
		this.budget.recordCall(now());
	}

	/**
	 * How long to wait for the endpoint's first token before hedging: the fixed delay, or the
	 * endpoint's recent first-token percentile (at least {@code min-delay}; the fixed delay until it
	 * has enough samples).
	 * @param endpoint the endpoint tried first
	 * @return the delay in nanoseconds
	 */
	long delayNanos(LlmEndpoint endpoint) {
		if (!this.settings.adaptive()) {
			return this.settings.delay().toNanos();
		}
		Duration observed = endpoint.firstTokenTimes().percentile(this.settings.percentile());
		if (observed == null) {
			return this.settings.delay().toNanos();
		}
		return Math.max(observed.toNanos(), this.settings.minDelay().toNanos());
	}

	/**
	 * Take a hedge from the budget.
	 * @return true if the call may be hedged now
	 */
	boolean tryHedge() {
		return this.budget.tryAcquire(now());
	}

	void count(HedgeOutcome outcome) {
		this.outcomes[outcome.ordinal()].increment();
	}

	HedgeReport report() {
		long now = now();
		return new HedgeReport(this.settings, this.budget.calls(now), this.budget.hedges(now),
				total(HedgeOutcome.HEDGE_WON), total(HedgeOutcome.FIRST_WON), total(HedgeOutcome.NO_WINNER),
				total(HedgeOutcome.REFUSED));
	}

	private long total(HedgeOutcome outcome) {
		return this.outcomes[outcome.ordinal()].sum();
	}

	private static long now() {
		return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
	}

}
