package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.spi.BreakerControl;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.IllegalStateTransitionException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Tells a hang of one endpoint from its own history, before {@code first-token-timeout} would
 * (docs/liveness.md): from its recent first-token times ({@link FirstTokenTimes}) a threshold,
 * {@code p99-multiple} times their 99th percentile and at least {@code floor}; the endpoint is hung
 * when at least {@code min-waiting-calls} calls wait for their first token, the oldest of them for
 * longer than the threshold, and no call of the endpoint has had a first token for as long. Then its
 * closed breaker is opened (Resilience4j's own transition, so that it is probed and closes as after
 * any opening) and the calls it held are released to the next endpoint of their route, as any
 * opening releases them; with shared state, every replica opens it too. A slow call among answered ones leaves first tokens coming, and a provider
 * that slows for everyone keeps sending them: neither is evidence. It also bounds a synthetic
 * probe's wait for its first token by the same times.
 * <p>
 * A call costs it one volatile write (its first token) and one volatile read (it starts to wait);
 * the check itself runs on a timer of the scheduler the attempts run on (Reactor's parallel one,
 * virtual in tests), armed while calls wait, once per threshold while first tokens come.
 */
final class HangDetector {

	private static final Log logger = LogFactory.getLog(HangDetector.class);

	/** The shortest wait between two checks while evidence builds up. */
	private static final long MIN_TICK = TimeUnit.MILLISECONDS.toNanos(50);

	private final LlmEndpoint endpoint;

	private final Clock clock;

	private final EndpointSettings.Liveness liveness;

	private final long firstTokenTimeout;

	// the last first token of any call, on the attempts' scheduler's clock
	private volatile long lastFirstToken = Long.MIN_VALUE;

	// the scheduler the check is armed on, null while no call waits; a test's virtual time replaces
	// the parallel scheduler, and a check armed on the one it replaced must not hold the arming
	private final AtomicReference<@Nullable Scheduler> armedOn = new AtomicReference<>();

	private final AtomicLong openings = new AtomicLong();

	private volatile @Nullable String lastOpening;

	// told of each opening, so that the fleet opens the endpoint too (with shared state)
	private volatile BreakerControl shared = BreakerControl.LOCAL;

	// why the breaker is being opened, read by BreakerTransitions while the transition is published
	private volatile @Nullable String opening;

	HangDetector(LlmEndpoint endpoint, Clock clock) {
		this.endpoint = endpoint;
		this.clock = clock;
		this.liveness = endpoint.settings().liveness();
		this.firstTokenTimeout = endpoint.settings().timeouts().firstTokenTimeout().toNanos();
	}

	/**
	 * Tell shared state of each opening from now on, so that the other replicas open too.
	 * @param control the breakers' control: {@link BreakerControl#LOCAL} tells nobody
	 */
	void shareOpenings(BreakerControl control) {
		this.shared = control;
	}

	/**
	 * A call had its first token.
	 * @param now the time, on the attempts' scheduler's clock
	 */
	void firstToken(long now) {
		this.lastFirstToken = now;
	}

	/**
	 * A call has started to wait for its first token: the check runs while any does.
	 * @param scheduler the scheduler the attempt runs on
	 */
	void waiting(Scheduler scheduler) {
		if (this.liveness.hangDetection() && this.armedOn.get() != scheduler) {
			arm(scheduler);
		}
	}

	private void arm(Scheduler scheduler) {
		Scheduler armed = this.armedOn.get();
		if (armed != scheduler && this.armedOn.compareAndSet(armed, scheduler)) {
			long threshold = thresholdNanos();
			later(scheduler, (threshold > 0) ? threshold : tick(threshold));
		}
	}

	private void check(Scheduler scheduler) {
		if (this.armedOn.get() != scheduler) {
			return;
		}
		long now = scheduler.now(TimeUnit.NANOSECONDS);
		Waiting waiting = stillWaiting();
		if (waiting.calls() == 0) {
			this.armedOn.compareAndSet(scheduler, null);
			if (!this.endpoint.waitingForFirstToken().isEmpty()) {
				// listed while this check found none, and found the check armed
				arm(scheduler);
			}
			return;
		}
		long threshold = thresholdNanos();
		// silent since the later of the last first token and the oldest wait's start
		long silentSince = Math.max(this.lastFirstToken, waiting.oldestStart());
		long silence = now - silentSince;
		if (threshold > 0 && silence >= threshold && waiting.calls() >= this.liveness.minWaitingCalls()
				&& this.endpoint.circuitBreaker().getState() == CircuitBreaker.State.CLOSED) {
			open(waiting.calls(), silence);
		}
		later(scheduler, (threshold > 0 && silence < threshold) ? threshold - silence : tick(threshold));
	}

	private void open(int waiting, long silence) {
		Duration p99 = this.endpoint.firstTokenTimes().percentile(99);
		String reason = "no first token from " + waiting + " calls for " + seconds(silence) + "; first tokens took "
				+ ((p99 != null) ? seconds(p99.toNanos()) : "?") + " at p99 (liveness.hang-detection)";
		this.opening = reason;
		try {
			this.endpoint.circuitBreaker().transitionToOpenState();
			this.openings.incrementAndGet();
			this.lastOpening = reason;
			this.shared.openedOnEvidence(this.endpoint.circuitBreaker(), reason);
		}
		catch (IllegalStateTransitionException ex) {
			// moved meanwhile (opened by its failures, forced by hand): nothing left to do
			if (logger.isDebugEnabled()) {
				logger.debug("Endpoint '" + this.endpoint.name() + "' was not opened for a hang: " + ex.getMessage());
			}
		}
		finally {
			this.opening = null;
		}
	}

	private void later(Scheduler scheduler, long delayNanos) {
		scheduler.schedule(() -> check(scheduler), delayNanos, TimeUnit.NANOSECONDS);
	}

	// while the evidence builds up (too few calls, a breaker not closed), checked again a few times a threshold
	private long tick(long threshold) {
		long base = (threshold > 0) ? threshold : this.liveness.hangFloor().toNanos();
		return Math.max(MIN_TICK, base / 8);
	}

	/**
	 * How long a silence is evidence of a hang now.
	 * @return the threshold in nanoseconds, or -1 when there is no rule to apply: switched off, fewer
	 * than {@value FirstTokenTimes#MIN_SAMPLES} first-token times known, or a threshold that
	 * {@code first-token-timeout} would reach first
	 */
	long thresholdNanos() {
		if (!this.liveness.hangDetection()) {
			return -1;
		}
		Duration p99 = this.endpoint.firstTokenTimes().percentile(99);
		if (p99 == null) {
			return -1;
		}
		long threshold = Math.max(this.liveness.hangFloor().toNanos(), (long) (p99.toNanos() * this.liveness.p99Multiple()));
		return (threshold < this.firstTokenTimeout) ? threshold : -1;
	}

	/**
	 * How long a synthetic probe waits for its first token: {@code p99-multiple} times the 99th
	 * percentile of the recent first tokens, at least {@code probe-floor}, at most
	 * {@code first-token-timeout} (which alone bounds it while too few are known). During a hang no
	 * first token is recorded, so the times are those from before it.
	 * @return the bound
	 */
	Duration probeFirstTokenTimeout() {
		Duration timeout = this.endpoint.settings().timeouts().firstTokenTimeout();
		Duration p99 = this.endpoint.firstTokenTimes().percentile(99);
		if (p99 == null) {
			return timeout;
		}
		long bound = Math.max(this.liveness.probeFloor().toNanos(), (long) (p99.toNanos() * this.liveness.p99Multiple()));
		return Duration.ofNanos(Math.min(bound, timeout.toNanos()));
	}

	/**
	 * Why the breaker is being opened, while this opens it.
	 * @return the reason, or {@code null} when the transition is not this one's
	 */
	@Nullable String opening() {
		return this.opening;
	}

	/**
	 * The evidence now, for {@code /actuator/llmbreakers}.
	 * @return the evidence
	 */
	HangDescriptor describe() {
		long now = Schedulers.parallel().now(TimeUnit.NANOSECONDS);
		Waiting waiting = stillWaiting();
		long threshold = thresholdNanos();
		long last = this.lastFirstToken;
		return new HangDescriptor(this.liveness.hangDetection(), (threshold > 0) ? Duration.ofNanos(threshold) : null,
				this.liveness.minWaitingCalls(), waiting.calls(),
				(waiting.calls() > 0) ? Duration.ofNanos(Math.max(0, now - waiting.oldestStart())) : null,
				(last != Long.MIN_VALUE) ? this.clock.instant().minusNanos(Math.max(0, now - last)) : null,
				this.openings.get(), this.lastOpening, probeFirstTokenTimeout());
	}

	// The streamed attempts still waiting for their first token, and when the oldest of them began. An
	// attempt sent as a plain request has no first token before its whole answer: no evidence.
	private Waiting stillWaiting() {
		int calls = 0;
		long oldest = Long.MAX_VALUE;
		for (EndpointAttempt attempt : this.endpoint.waitingForFirstToken()) {
			if (attempt.call().streaming() && !attempt.started() && !attempt.ended()) {
				calls++;
				oldest = Math.min(oldest, attempt.start());
			}
		}
		return new Waiting(calls, oldest);
	}

	private record Waiting(int calls, long oldestStart) {

	}

	private static String seconds(long nanos) {
		return String.format(Locale.ROOT, "%.1f s", nanos / 1e9);
	}

}
