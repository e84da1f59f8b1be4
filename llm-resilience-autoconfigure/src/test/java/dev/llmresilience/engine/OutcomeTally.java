package dev.llmresilience.engine;

import java.util.EnumMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGatewayListener;
import dev.llmresilience.protocol.Completion;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

/**
 * Two independent tallies of the hammer: the attempts as the gateway reports them to its listeners,
 * and what each circuit breaker published on its event stream. The breaker's own metrics only hold
 * its sliding window (the last N calls since its last state change); its event stream sees every
 * call, so the two can be compared over the whole run.
 */
final class OutcomeTally implements LlmGatewayListener {

	private final Map<String, Map<Outcome, LongAdder>> attempts = new ConcurrentHashMap<>();

	private final Map<Tier, LongAdder> tiers = new ConcurrentHashMap<>();

	private final Map<String, BreakerEvents> breakers = new ConcurrentHashMap<>();

	/**
	 * Listen to a breaker's events.
	 * @param breaker the breaker
	 */
	void listenTo(CircuitBreaker breaker) {
		BreakerEvents events = new BreakerEvents();
		this.breakers.put(breaker.getName(), events);
		breaker.getEventPublisher()
			.onSuccess((event) -> events.successes.increment())
			.onError((event) -> events.failures.increment())
			.onIgnoredError((event) -> events.ignored.increment())
			.onCallNotPermitted((event) -> events.notPermitted.increment())
			.onStateTransition((event) -> events.transitions
				.computeIfAbsent(event.getStateTransition().getFromState() + "_TO_" + event.getStateTransition().getToState(),
						(key) -> new LongAdder())
				.increment());
	}

	@Override
	public void onAttempt(String route, EndpointSettings endpoint, Attempt attempt, @Nullable Completion completion) {
		count(this.attempts, endpoint.name(), attempt.outcome());
	}

	private static void count(Map<String, Map<Outcome, LongAdder>> tally, String endpoint, Outcome outcome) {
		tally.computeIfAbsent(endpoint, (name) -> new ConcurrentHashMap<>())
			.computeIfAbsent(outcome, (key) -> new LongAdder())
			.increment();
	}

	@Override
	public void onResponse(String route, ChatResponse response) {
		this.tiers.computeIfAbsent(response.tier(), (tier) -> new LongAdder()).increment();
	}

	/**
	 * Attempts with an outcome that the gateway's listeners heard of.
	 * @param endpoint the endpoint
	 * @param outcome the outcome
	 * @return the count
	 */
	long attempts(String endpoint, Outcome outcome) {
		return sum(this.attempts, endpoint, outcome);
	}

	private static long sum(Map<String, Map<Outcome, LongAdder>> tally, String endpoint, Outcome outcome) {
		LongAdder count = tally.getOrDefault(endpoint, Map.of()).get(outcome);
		return (count != null) ? count.sum() : 0;
	}

	Map<Outcome, Long> attempts() {
		Map<Outcome, Long> all = new EnumMap<>(Outcome.class);
		this.attempts.values()
			.forEach((byOutcome) -> byOutcome.forEach((outcome, count) -> all.merge(outcome, count.sum(), Long::sum)));
		return all;
	}

	long tier(Tier tier) {
		LongAdder count = this.tiers.get(tier);
		return (count != null) ? count.sum() : 0;
	}

	Map<Tier, Long> tiers() {
		Map<Tier, Long> all = new EnumMap<>(Tier.class);
		this.tiers.forEach((tier, count) -> all.put(tier, count.sum()));
		return all;
	}

	/**
	 * What the breaker should have published for the attempts the gateway reported: a success per
	 * {@code SUCCESS}, a failure per outcome the rules count, a refusal per {@code BREAKER_OPEN}, and an
	 * ignored error per other outcome that passed through the breaker (a content filter, an invalid
	 * request). A full bulkhead, a deadline and a release on open give the permit back unrecorded; a
	 * call the gateway-wide limit refused never reached the breaker.
	 * @param endpoint the endpoint
	 * @return the expected counts
	 */
	BreakerCounts expectedFromAttempts(String endpoint) {
		long successes = 0;
		long failures = 0;
		long ignored = 0;
		long notPermitted = 0;
		for (Outcome outcome : Outcome.values()) {
			long count = attempts(endpoint, outcome);
			if (outcome == Outcome.SUCCESS) {
				successes += count;
			}
			else if (outcome.isBreakerFailure()) {
				failures += count;
			}
			else if (outcome == Outcome.BREAKER_OPEN) {
				notPermitted += count;
			}
			else if (outcome != Outcome.DEADLINE_EXCEEDED && outcome != Outcome.BULKHEAD_FULL
					&& outcome != Outcome.RELEASED && outcome != Outcome.GATEWAY_FULL) {
				ignored += count;
			}
		}
		return new BreakerCounts(successes, failures, ignored, notPermitted);
	}

	BreakerCounts published(String endpoint) {
		BreakerEvents events = this.breakers.get(endpoint);
		return new BreakerCounts(events.successes.sum(), events.failures.sum(), events.ignored.sum(),
				events.notPermitted.sum());
	}

	long transitions(String endpoint, CircuitBreaker.State from, CircuitBreaker.State to) {
		LongAdder count = this.breakers.get(endpoint).transitions.get(from + "_TO_" + to);
		return (count != null) ? count.sum() : 0;
	}

	Map<String, Long> transitions(String endpoint) {
		Map<String, Long> all = new TreeMap<>();
		this.breakers.get(endpoint).transitions.forEach((transition, count) -> all.put(transition, count.sum()));
		return all;
	}

	/**
	 * Calls a breaker handled, by what it made of them.
	 *
	 * @param successes recorded successes
	 * @param failures recorded failures
	 * @param ignored errors released without being recorded
	 * @param notPermitted calls refused
	 */
	record BreakerCounts(long successes, long failures, long ignored, long notPermitted) {
	}

	private static final class BreakerEvents {

		final LongAdder successes = new LongAdder();

		final LongAdder failures = new LongAdder();

		final LongAdder ignored = new LongAdder();

		final LongAdder notPermitted = new LongAdder();

		final Map<String, LongAdder> transitions = new ConcurrentHashMap<>();

	}

}
