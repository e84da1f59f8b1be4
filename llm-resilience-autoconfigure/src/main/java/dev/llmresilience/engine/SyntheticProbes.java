package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.gateway.EndpointSettings;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

/**
 * The breaker's own half-open probes ({@code circuit-breaker.probe: synthetic}): as soon as the open
 * state's wait has passed, Resilience4j moves the breaker to HALF_OPEN (its automatic transition,
 * which {@link EndpointFactory} turns on for these endpoints) and its permitted probes are sent, a
 * minimal request each ({@link #REQUEST}: the endpoint's model, one short user message, a max-tokens
 * of 1), with no user traffic needed. Users' calls are refused while HALF_OPEN, so none waits on a
 * model the breaker believes down. A probe that could not be sent (its bulkhead full, the
 * call-volume guard spent) is sent again a moment later while the same half-open state lasts.
 */
final class SyntheticProbes {

	/** The probe: one short user message, a max-tokens of 1. */
	static final ChatRequest REQUEST = ChatRequest.builder().user("Hi").maxTokens(1).build();

	private static final Log logger = LogFactory.getLog(SyntheticProbes.class);

	private static final Duration AGAIN = Duration.ofSeconds(1);

	private final LlmEndpoint endpoint;

	private final CallVolumeGuard guard;

	private final Clock clock;

	private final AtomicLong sent = new AtomicLong();

	private final AtomicLong succeeded = new AtomicLong();

	private final AtomicLong failed = new AtomicLong();

	private volatile @Nullable Instant lastAt;

	private volatile @Nullable Outcome lastOutcome;

	private volatile boolean stopped;

	SyntheticProbes(LlmEndpoint endpoint, CallVolumeGuard guard, Clock clock) {
		this.endpoint = endpoint;
		this.guard = guard;
		this.clock = clock;
		endpoint.circuitBreaker().getEventPublisher().onStateTransition(this::transitioned);
	}

	// The move from OPEN is Resilience4j's own (its automatic transition, see EndpointFactory): made once
	// per open state and published, whether its timer or a call's permit request makes it.
	private void transitioned(CircuitBreakerOnStateTransitionEvent event) {
		if (event.getStateTransition().getToState() != CircuitBreaker.State.HALF_OPEN) {
			return;
		}
		CircuitBreaker breaker = this.endpoint.circuitBreaker();
		CircuitBreaker.Metrics episode = breaker.getMetrics();
		later(Duration.ZERO, () -> {
			for (int i = 0; i < breaker.getCircuitBreakerConfig().getPermittedNumberOfCallsInHalfOpenState(); i++) {
				probe(episode);
			}
		});
	}

	private void probe(CircuitBreaker.Metrics episode) {
		CircuitBreaker breaker = this.endpoint.circuitBreaker();
		if (this.stopped || breaker.getState() != CircuitBreaker.State.HALF_OPEN || breaker.getMetrics() != episode
				|| !this.endpoint.settings().routing().enabled()) {
			return;
		}
		CallContext context = new CallContext((attempt, completion) -> probed(attempt, episode), null, Long.MAX_VALUE,
				Long.MAX_VALUE, this.guard, () -> false);
		this.endpoint.probe(REQUEST, context).subscribe((answer) -> {
		}, (error) -> {
		});
	}

	private void probed(Attempt attempt, CircuitBreaker.Metrics episode) {
		Outcome outcome = attempt.outcome();
		if (outcome == Outcome.BREAKER_OPEN || outcome == Outcome.BULKHEAD_FULL || outcome == Outcome.GUARD_TRIPPED
				|| outcome == Outcome.CAPACITY_EXHAUSTED) {
			// not sent: the state the probe was for still needs it
			Duration again = (outcome == Outcome.GUARD_TRIPPED) ? waitInOpenState(this.endpoint.circuitBreaker()) : AGAIN;
			later(again, () -> probe(episode));
			return;
		}
		this.sent.incrementAndGet();
		(outcome == Outcome.SUCCESS ? this.succeeded : this.failed).incrementAndGet();
		this.lastAt = this.clock.instant();
		this.lastOutcome = outcome;
		if (logger.isDebugEnabled()) {
			logger.debug("Probe of endpoint '" + this.endpoint.name() + "': " + outcome + " in " + attempt.duration());
		}
	}

	/**
	 * Send no more probes: the endpoint's client is being closed. Resilience4j's own timer may still
	 * move the breaker to HALF_OPEN later; nothing is sent then.
	 */
	void stop() {
		this.stopped = true;
	}

	ProbeStats stats() {
		return new ProbeStats(EndpointSettings.Probe.SYNTHETIC, this.sent.get(), this.succeeded.get(), this.failed.get(),
				this.lastAt, this.lastOutcome);
	}

	private static Duration waitInOpenState(CircuitBreaker breaker) {
		return Duration.ofMillis(breaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1));
	}

	private static void later(Duration delay, Runnable task) {
		Schedulers.parallel().schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
	}

}
