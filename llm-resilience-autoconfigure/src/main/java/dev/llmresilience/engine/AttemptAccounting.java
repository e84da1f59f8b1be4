package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.Completion;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The permits of one attempt and how it is accounted for: admitted past the deadline, the breaker
 * and the bulkhead (or refused, no call made); then, exactly once, recorded in the breaker as it
 * ended (a success, a failure, an ignored outcome, a slow call when it lost a hedged request's
 * race, nothing when cancelled or abandoned), its bulkhead slot given back, its observation stopped
 * and the call told. {@link EndpointAttempt} is this plus the attempt's signals.
 */
abstract class AttemptAccounting {

	private static final AtomicIntegerFieldUpdater<AttemptAccounting> ENDED = AtomicIntegerFieldUpdater
		.newUpdater(AttemptAccounting.class, "ended");

	final EndpointCall call;

	final LlmEndpoint endpoint;

	final EndpointSettings settings;

	final Scheduler scheduler = Schedulers.parallel();

	private @Nullable CircuitBreakerPermit permit;

	private Observation observation = Observation.NOOP;

	long start;

	volatile long firstToken = -1;

	volatile int ended;

	AttemptAccounting(EndpointCall call) {
		this.call = call;
		this.endpoint = call.endpoint();
		this.settings = this.endpoint.settings();
	}

	/**
	 * Take the attempt's permits.
	 * @param now the scheduler's time
	 * @return the reason and the error of a refusal (already told to the call), or {@code null} when
	 * admitted
	 */
	@Nullable Throwable admit(long now) {
		CallContext context = this.call.context();
		if (now >= context.deadlineNanos()) {
			return refuse(Outcome.DEADLINE_EXCEEDED, this.call.time()
				.upstream(Outcome.DEADLINE_EXCEEDED, "The call's deadline ran out before this attempt could start"));
		}
		boolean user = this.call.exposure() != EndpointAttempt.Exposure.PROBE;
		CircuitBreaker breaker = this.endpoint.circuitBreaker();
		if (user && this.endpoint.probesItself() && breaker.getState() == CircuitBreaker.State.HALF_OPEN) {
			return refuse(Outcome.BREAKER_OPEN, notPermitted());
		}
		CircuitBreakerPermit permit = CircuitBreakerPermit.tryAcquire(breaker);
		if (permit == null) {
			return refuse(Outcome.BREAKER_OPEN, notPermitted());
		}
		if (user && this.endpoint.probesItself() && permit.fromCurrentHalfOpenState()) {
			// this call's permit request ended the open state's wait: the probes are the library's
			permit.release();
			return refuse(Outcome.BREAKER_OPEN, notPermitted());
		}
		if (!this.endpoint.bulkhead().tryAcquirePermission()) {
			permit.release();
			return refuse(Outcome.BULKHEAD_FULL, BulkheadFullException.createBulkheadFullException(this.endpoint.bulkhead()));
		}
		this.permit = permit;
		this.start = now;
		this.observation = AttemptObservation.start(context.parent(), this.settings, "chat");
		return null;
	}

	private Throwable refuse(Outcome outcome, Throwable error) {
		this.call.context().onAttempt().accept(new Attempt(this.settings.name(), outcome, Duration.ZERO), null);
		return error;
	}

	private CallNotPermittedException notPermitted() {
		return CallNotPermittedException.createCallNotPermittedException(this.endpoint.circuitBreaker());
	}

	/**
	 * Account for an attempt that ended, once.
	 * @param outcome how it ended
	 * @param error its classified error, or {@code null} for a normal end
	 * @param completion its answer for the listeners when it ended normally
	 */
	final void finish(Outcome outcome, @Nullable Throwable error, @Nullable Completion completion) {
		if (!ENDED.compareAndSet(this, 0, 1)) {
			return;
		}
		this.endpoint.waiting((EndpointAttempt) this, false);
		long firstToken = this.firstToken;
		long end = now();
		long measured = ((firstToken >= 0) ? firstToken : end) - this.start;
		CircuitBreakerPermit permit = this.permit;
		if (permit != null) {
			if (outcome == Outcome.DEADLINE_EXCEEDED || outcome == Outcome.RELEASED) {
				// abandoned by the call, not ended by the provider: nothing to record
				permit.release();
			}
			else if (error != null) {
				permit.failed(measured, error);
			}
			else if (outcome == Outcome.SUCCESS) {
				permit.succeeded(measured);
			}
			else {
				// a normal end that is neither a success nor a failure (a filtered answer): ignored
				permit.release();
			}
		}
		this.endpoint.bulkhead().onComplete();
		AttemptObservation.stop(this.observation, outcome, error, this.settings.upstream().model());
		CallContext context = this.call.context();
		context.onAttempt().accept(new Attempt(this.settings.name(), outcome, Duration.ofNanos(end - this.start)),
				(error == null) ? completion : null);
		if (error instanceof LlmUpstreamException upstream && AttemptTime.NO_TIME_LEFT.equals(upstream.noRetry())) {
			// the retry the deadline could not fit, refused as the attempt it would have been
			context.onAttempt().accept(new Attempt(this.settings.name(), Outcome.DEADLINE_EXCEEDED, Duration.ZERO), null);
		}
	}

	/**
	 * Account for an attempt that was cancelled before it ended, once: nothing recorded, or a slow
	 * call when the other side of a hedged request won.
	 * @param lost whether it lost a race
	 */
	final void cancelled(boolean lost) {
		if (!ENDED.compareAndSet(this, 0, 1)) {
			return;
		}
		this.endpoint.waiting((EndpointAttempt) this, false);
		CircuitBreakerPermit permit = this.permit;
		if (!lost) {
			if (permit != null) {
				permit.release();
			}
			this.endpoint.bulkhead().onComplete();
			AttemptObservation.cancelled(this.observation, this.settings.upstream().model());
			return;
		}
		// the other side of a hedged request won: a slow call for the breaker, whatever its real length
		long elapsed = now() - this.start;
		if (permit != null) {
			long slow = this.endpoint.circuitBreaker().getCircuitBreakerConfig().getSlowCallDurationThreshold().toNanos();
			permit.succeeded(Math.max(elapsed, slow + 1));
		}
		this.endpoint.bulkhead().onComplete();
		AttemptObservation.stop(this.observation, Outcome.HEDGE_LOST, null, this.settings.upstream().model());
		this.call.context().onAttempt().accept(new Attempt(this.settings.name(), Outcome.HEDGE_LOST,
				Duration.ofNanos(elapsed)), null);
	}

	final long now() {
		return this.scheduler.now(TimeUnit.NANOSECONDS);
	}

}
