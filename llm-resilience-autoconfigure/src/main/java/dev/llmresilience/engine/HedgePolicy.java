package dev.llmresilience.engine;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
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
	 * endpoint's recent first-token percentile (at least {@code min-delay}): with
	 * {@code by-prompt-size}, that of the prompts of this call's size, else (or while that size has
	 * too few samples) that of all its calls; the fixed delay until it has enough samples.
	 * @param endpoint the endpoint tried first
	 * @param promptSize the call's prompt-size bucket, or {@link PromptSizeTimes#NONE}
	 * @return the delay in nanoseconds
	 */
	long delayNanos(LlmEndpoint endpoint, int promptSize) {
		return delayNanos(endpoint.firstTokenTimes(), endpoint.promptSizeTimes(), promptSize);
	}

	/**
	 * The delay of {@link #delayNanos(LlmEndpoint, int)}, from an endpoint's first-token times.
	 * @param all the times of all its calls
	 * @param bySize the times by prompt size
	 * @param promptSize the call's prompt-size bucket, or {@link PromptSizeTimes#NONE}
	 * @return the delay in nanoseconds
	 */
	long delayNanos(FirstTokenTimes all, PromptSizeTimes bySize, int promptSize) {
		if (!this.settings.adaptive()) {
			return this.settings.delay().toNanos();
		}
		Duration observed = null;
		FirstTokenTimes own = (this.settings.byPromptSize() && promptSize >= 0) ? bySize.times(promptSize) : null;
		if (own != null) {
			observed = own.percentile(this.settings.percentile());
		}
		if (observed == null) {
			observed = all.percentile(this.settings.percentile());
		}
		if (observed == null) {
			return this.settings.delay().toNanos();
		}
		return Math.max(observed.toNanos(), this.settings.minDelay().toNanos());
	}

	/**
	 * The delay of each prompt size an endpoint has seen calls of, for {@code /actuator/llmbreakers}.
	 * @param endpoint the endpoint
	 * @return by bucket name, the delay a call of that size waits now and the samples it is read from
	 */
	Map<String, SizeDelay> sizeDelays(LlmEndpoint endpoint) {
		Map<String, SizeDelay> delays = new LinkedHashMap<>();
		PromptSizeTimes times = endpoint.promptSizeTimes();
		for (int bucket = 0; bucket < PromptSizeTimes.BUCKETS; bucket++) {
			FirstTokenTimes own = times.times(bucket);
			if (own == null || own.count() == 0) {
				continue;
			}
			String basis;
			if (!this.settings.adaptive()) {
				basis = "fixed";
			}
			else if (own.percentile(this.settings.percentile()) != null) {
				basis = "size";
			}
			else {
				basis = (endpoint.firstTokenTimes().percentile(this.settings.percentile()) != null) ? "endpoint" : "fixed";
			}
			delays.put(PromptSizeTimes.label(bucket),
					new SizeDelay(own.count(), Duration.ofNanos(delayNanos(endpoint, bucket)), basis));
		}
		return delays;
	}

	/**
	 * The hedge delay of one prompt size on one endpoint.
	 *
	 * @param samples the first-token times recorded for this size since start-up
	 * @param delay the delay a call of this size waits before it is hedged now
	 * @param basis what the delay is read from: {@code size} (this size's own times),
	 * {@code endpoint} (all the endpoint's, this size having too few) or {@code fixed}
	 */
	record SizeDelay(long samples, Duration delay, String basis) {
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
