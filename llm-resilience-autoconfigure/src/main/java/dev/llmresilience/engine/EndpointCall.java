package dev.llmresilience.engine;

import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import io.github.resilience4j.retry.Retry;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

/**
 * One call on one endpoint: its {@link EndpointAttempt}s under the endpoint's Resilience4j
 * {@link Retry}. Resilience4j's {@code RetryOperator} decides nothing that this does not ask the
 * same {@link Retry.AsyncContext} for (whether to try again, after how long, and the retry's
 * events and metrics); it is not used itself because its {@code retryWhen} costs about a kilobyte
 * and a dozen objects on every call, retried or not, where this costs one object and asks for a
 * context only after a failure. An attempt is retried only before it has handed anything on (a
 * chat attempt hands on its answer at its end, a stream's first chunk makes any later failure an
 * interruption), so the demand of the subscriber passes whole to each attempt in turn.
 */
final class EndpointCall implements CoreSubscriber<Object>, Subscription {

	/** How often a released call waiting for a slot looks again. */
	private static final long ROOM_POLL_MILLIS = 10;

	private final CoreSubscriber<Object> actual;

	private final LlmEndpoint endpoint;

	private final ChatRequest request;

	private final EndpointAttempt.Exposure exposure;

	private final CallContext context;

	private final @Nullable Retry retry;

	private final boolean streaming;

	private final AttemptTime time;

	private Retry.@Nullable AsyncContext<Object> retryContext;

	private int number;

	private long requested;

	private @Nullable Subscription current;

	private volatile boolean cancelled;

	private volatile @Nullable Disposable pending;

	// until when a released call waits for a slot of the bulkhead, on the parallel scheduler's clock
	private long roomBy = Long.MIN_VALUE;

	// a slot of the bulkhead taken for the next attempt while it waited, which the attempt takes over
	private boolean slotHeld;

	private EndpointCall(CoreSubscriber<Object> actual, LlmEndpoint endpoint, ChatRequest request,
			EndpointAttempt.Exposure exposure, CallContext context, @Nullable Retry retry) {
		this.actual = actual;
		this.endpoint = endpoint;
		this.request = request;
		this.exposure = exposure;
		this.context = context;
		this.retry = retry;
		this.streaming = endpoint.streamsUpstream(exposure);
		this.time = new AttemptTime(settings(endpoint, exposure), request, exposure, context, this.streaming,
				endpoint.classifier());
	}

	// A synthetic probe waits for its first token as long as first tokens normally take, not the
	// whole first-token-timeout: a provider that recovers just after probes were sent is let back
	// in seconds later, not a timeout later (a few probes every open wait: the copy costs nothing).
	private static EndpointSettings settings(LlmEndpoint endpoint, EndpointAttempt.Exposure exposure) {
		EndpointSettings settings = endpoint.settings();
		if (exposure != EndpointAttempt.Exposure.PROBE) {
			return settings;
		}
		EndpointSettings.Timeouts timeouts = settings.timeouts();
		return settings.toBuilder()
			.timeouts(new EndpointSettings.Timeouts(timeouts.timeout(), timeouts.connectTimeout(),
					endpoint.hang().probeFirstTokenTimeout(), timeouts.streamIdleTimeout(), timeouts.upstreamStreaming()))
			.build();
	}

	/**
	 * A whole answer.
	 * @param endpoint the endpoint
	 * @param request the request
	 * @param exposure {@link EndpointAttempt.Exposure#CHAT}, or {@link EndpointAttempt.Exposure#PROBE}
	 * (then with no retry)
	 * @param context what the gateway call shares
	 * @return the completion, or the last attempt's classified error
	 */
	static Mono<Completion> chat(LlmEndpoint endpoint, ChatRequest request, EndpointAttempt.Exposure exposure,
			CallContext context) {
		Retry retry = (exposure == EndpointAttempt.Exposure.PROBE) ? null : endpoint.retry();
		return new Mono<>() {

			@Override
			@SuppressWarnings("unchecked")
			public void subscribe(CoreSubscriber<? super Completion> actual) {
				new EndpointCall((CoreSubscriber<Object>) actual, endpoint, request, exposure, context, retry).start();
			}

		};
	}

	/**
	 * A streamed answer.
	 * @param endpoint the endpoint
	 * @param request the request
	 * @param context what the gateway call shares
	 * @return the chunks from the first token on, or the classified error
	 */
	static Flux<CompletionDelta> stream(LlmEndpoint endpoint, ChatRequest request, CallContext context) {
		return new Flux<>() {

			@Override
			@SuppressWarnings("unchecked")
			public void subscribe(CoreSubscriber<? super CompletionDelta> actual) {
				new EndpointCall((CoreSubscriber<Object>) actual, endpoint, request, EndpointAttempt.Exposure.STREAM,
						context, endpoint.retry()).start();
			}

		};
	}

	private void start() {
		this.actual.onSubscribe(this);
		if (this.context.released()) {
			long wait = this.endpoint.settings().bulkhead().releasedCallsWait().toNanos();
			long now = Schedulers.parallel().now(TimeUnit.NANOSECONDS);
			this.roomBy = now + Math.min(wait, Math.max(0, this.context.deadlineNanos() - now));
		}
		next();
	}

	private void next() {
		if (this.cancelled) {
			return;
		}
		if (this.roomBy != Long.MIN_VALUE && !roomFound()) {
			this.pending = Schedulers.parallel().schedule(this::next, ROOM_POLL_MILLIS, TimeUnit.MILLISECONDS);
			if (this.cancelled) {
				disposePending();
			}
			return;
		}
		this.number++;
		if (this.number == 1 && this.exposure != EndpointAttempt.Exposure.PROBE) {
			this.endpoint.retryBudget().call(Schedulers.parallel().now(TimeUnit.NANOSECONDS));
		}
		new EndpointAttempt(this, this.number).subscribe(this);
		if (this.slotHeld) {
			// refused before it reached the bulkhead (its breaker, its deadline): the slot goes back
			this.slotHeld = false;
			this.endpoint.bulkhead().onComplete();
		}
	}

	/**
	 * Hand the bulkhead slot taken while the call waited to its attempt.
	 * @return true if the attempt has it, and takes no other
	 */
	boolean takeHeldSlot() {
		if (this.slotHeld) {
			this.slotHeld = false;
			return true;
		}
		return false;
	}

	// An opening breaker releases its waiting calls all at once, more than the next endpoint may have
	// room for: rather than be refused and degrade, a released call looks again for a slot every few
	// milliseconds, holding no thread, while this endpoint's breaker would let it through. The slot is
	// taken here, for the attempt, so that another waiter cannot take it between a look and the attempt.
	// True when the first attempt may go: with a slot, or waiting no longer (the time is up, the breaker
	// would refuse it).
	private boolean roomFound() {
		if (Schedulers.parallel().now(TimeUnit.NANOSECONDS) >= this.roomBy || !this.endpoint.breakerAdmitsCalls()) {
			this.roomBy = Long.MIN_VALUE;
			return true;
		}
		if (this.endpoint.bulkhead().tryAcquirePermission()) {
			this.slotHeld = true;
			this.roomBy = Long.MIN_VALUE;
			return true;
		}
		return false;
	}

	@Override
	public Context currentContext() {
		return this.actual.currentContext();
	}

	// Each attempt in turn: it gets all the demand so far, and whatever comes after it.
	@Override
	public void onSubscribe(Subscription attempt) {
		long requested;
		synchronized (this) {
			this.current = attempt;
			requested = this.requested;
		}
		if (this.cancelled) {
			attempt.cancel();
		}
		else if (requested > 0) {
			attempt.request(requested);
		}
	}

	@Override
	public void request(long n) {
		if (!Operators.validate(n)) {
			return;
		}
		Subscription current;
		synchronized (this) {
			this.requested = Operators.addCap(this.requested, n);
			current = this.current;
		}
		if (current != null) {
			current.request(n);
		}
	}

	@Override
	public void onNext(Object element) {
		this.actual.onNext(element);
	}

	@Override
	public void onError(Throwable error) {
		Retry retry = this.retry;
		if (retry == null || error instanceof Error) {
			this.actual.onError(error);
			return;
		}
		Retry.AsyncContext<Object> context = this.retryContext;
		if (context == null) {
			context = retry.asyncContext();
			this.retryContext = context;
		}
		long waitMillis = context.onError(error);
		if (waitMillis == -1) {
			this.actual.onError(error);
			return;
		}
		this.pending = Schedulers.parallel().schedule(this::next, waitMillis, TimeUnit.MILLISECONDS);
		if (this.cancelled) {
			disposePending();
		}
	}

	@Override
	public void onComplete() {
		Retry retry = this.retry;
		if (retry != null) {
			// a success on the first try is counted by a context of its own, as Resilience4j's operator does
			Retry.AsyncContext<Object> context = (this.retryContext != null) ? this.retryContext : retry.asyncContext();
			context.onComplete();
		}
		this.actual.onComplete();
	}

	@Override
	public void cancel() {
		this.cancelled = true;
		Subscription current;
		synchronized (this) {
			current = this.current;
		}
		if (current != null) {
			current.cancel();
		}
		disposePending();
	}

	private void disposePending() {
		Disposable pending = this.pending;
		if (pending != null) {
			pending.dispose();
		}
	}

	LlmEndpoint endpoint() {
		return this.endpoint;
	}

	ChatRequest request() {
		return this.request;
	}

	EndpointAttempt.Exposure exposure() {
		return this.exposure;
	}

	CallContext context() {
		return this.context;
	}

	AttemptTime time() {
		return this.time;
	}

	boolean streaming() {
		return this.streaming;
	}

}
