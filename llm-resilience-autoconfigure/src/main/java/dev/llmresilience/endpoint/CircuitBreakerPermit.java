package dev.llmresilience.endpoint;

import java.util.concurrent.atomic.AtomicBoolean;

import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

/**
 * Runs one attempt under a circuit breaker's permit as Resilience4j's {@code CircuitBreakerOperator}
 * does (acquire on subscribe; record the outcome before it travels on; on cancel, or on an ignored
 * error, give the permit back; after a cancel, drop what still arrives), with two differences:
 * <ul>
 * <li>Resilience4j gives a permit back to whatever state the breaker is in by then: a call let
 * through while CLOSED that is cancelled, or ends with an ignored outcome (a content filter, an
 * invalid request), once the breaker is HALF_OPEN adds a probe the half-open state never gave, and
 * more calls than {@code permitted-calls-in-half-open-state} reach a provider that is recovering.
 * Here a permit goes back only to the half-open state that gave it (other states ignore a returned
 * permit).</li>
 * <li>What arrives after a cancel is dropped quietly: the caller has gone, and Reactor's default for
 * a dropped error is an ERROR log with a stack trace (a full bulkhead met as the caller let go, for
 * one).</li>
 * </ul>
 */
final class CircuitBreakerPermit {

	private final CircuitBreaker breaker;

	private final CircuitBreaker.Metrics window;

	private final long start;

	private final AtomicBoolean ended = new AtomicBoolean();

	private CircuitBreakerPermit(CircuitBreaker breaker) {
		this.breaker = breaker;
		// Resilience4j gives each state its own window and keeps it for the state's life, so the
		// window tells the half-open state (and episode) that gave the permit from any later one.
		this.window = breaker.getMetrics();
		this.start = breaker.getCurrentTimestamp();
	}

	/**
	 * Run an attempt under a permit of the breaker, or fail it with a
	 * {@link CallNotPermittedException} when there is none.
	 * @param <T> the attempt's value
	 * @param breaker the breaker
	 * @param attempt the attempt
	 * @return the attempt under the breaker
	 */
	static <T> Mono<T> run(CircuitBreaker breaker, Mono<T> attempt) {
		return Mono.defer(() -> {
			if (!breaker.tryAcquirePermission()) {
				return Mono.error(CallNotPermittedException.createCallNotPermittedException(breaker));
			}
			CircuitBreakerPermit permit = new CircuitBreakerPermit(breaker);
			return attempt.transform(Operators.<T, T>lift((scannable, actual) -> new Guard<>(permit, actual)));
		});
	}

	private boolean succeeded(@Nullable Object value) {
		if (!this.ended.compareAndSet(false, true)) {
			return false;
		}
		long duration = this.breaker.getCurrentTimestamp() - this.start;
		if (value != null) {
			this.breaker.onResult(duration, this.breaker.getTimestampUnit(), value);
		}
		else {
			this.breaker.onSuccess(duration, this.breaker.getTimestampUnit());
		}
		return true;
	}

	private boolean failed(Throwable error) {
		if (!this.ended.compareAndSet(false, true)) {
			return false;
		}
		boolean ignored = this.breaker.getCircuitBreakerConfig().getIgnoreExceptionPredicate().test(error);
		// an ignored error gives the permit back, which must not reach a half-open state that did not give it
		if (!ignored || ownsPermit()) {
			this.breaker.onError(this.breaker.getCurrentTimestamp() - this.start, this.breaker.getTimestampUnit(), error);
		}
		return true;
	}

	private void cancelled() {
		if (this.ended.compareAndSet(false, true) && ownsPermit()) {
			this.breaker.releasePermission();
		}
	}

	private boolean ownsPermit() {
		return owns(this.breaker, this.window);
	}

	/**
	 * Whether a permit taken while the breaker's window was {@code window} may be given back now:
	 * always, unless the breaker is half-open in another episode than the one that gave it.
	 * @param breaker the breaker
	 * @param window {@code breaker.getMetrics()} when the permit was taken
	 * @return true if the permit may be released into the current state
	 */
	static boolean owns(CircuitBreaker breaker, CircuitBreaker.@Nullable Metrics window) {
		return breaker.getState() != CircuitBreaker.State.HALF_OPEN || breaker.getMetrics() == window;
	}

	/** Records each signal of the attempt before passing it on; drops what arrives after a cancel. */
	private static final class Guard<T> implements CoreSubscriber<T>, Subscription {

		private final CircuitBreakerPermit permit;

		private final CoreSubscriber<? super T> actual;

		private Subscription upstream = Operators.emptySubscription();

		private boolean valued;

		Guard(CircuitBreakerPermit permit, CoreSubscriber<? super T> actual) {
			this.permit = permit;
			this.actual = actual;
		}

		@Override
		public Context currentContext() {
			return this.actual.currentContext();
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			this.upstream = subscription;
			this.actual.onSubscribe(this);
		}

		@Override
		public void onNext(T value) {
			this.valued = true;
			if (this.permit.succeeded(value)) {
				this.actual.onNext(value);
			}
			else {
				Operators.onDiscard(value, currentContext());
			}
		}

		@Override
		public void onError(Throwable error) {
			if (this.permit.failed(error)) {
				this.actual.onError(error);
			}
		}

		@Override
		public void onComplete() {
			if (this.valued || this.permit.succeeded(null)) {
				this.actual.onComplete();
			}
		}

		@Override
		public void request(long n) {
			this.upstream.request(n);
		}

		@Override
		public void cancel() {
			// upstream first, as Resilience4j does: the call has stopped before its permit is free
			this.upstream.cancel();
			this.permit.cancelled();
		}

	}

}
