package dev.llmresilience.endpoint;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.guard.CallVolumeGuard;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;
import reactor.core.scheduler.Schedulers;

/**
 * One streamed attempt on one endpoint. The breaker's and the bulkhead's permits are taken and
 * given back here by hand rather than with Resilience4j's reactor operators, because
 * {@code CircuitBreakerOperator} records a subscriber's cancel after the first element as a success
 * and measures a call by its whole length: both wrong for a stream. Here a stream is a success only
 * when it ends normally, a failure when it breaks, stalls or ends truncated (as the
 * {@link FailureClassifier} says), and nothing at all when the caller cancels it; either way both
 * permits are released exactly once. The bulkhead's permit is held for the whole stream, so the
 * bulkhead counts concurrent streams. The duration the breaker sees, for its slow-call rate, is the
 * time to the first token: a long answer is not a slow provider.
 * <p>
 * Nothing reaches the subscriber before the first chunk that carries part of the answer (text that
 * is not only whitespace, or a tool-call piece), so a failure before it can be retried unseen. The
 * chunk with the finish reason is held back and merged with the usage chunk that follows it, so
 * that the last chunk carries both.
 */
final class StreamAttempt {

	private final EndpointSettings settings;

	private final LlmClient client;

	private final CircuitBreaker circuitBreaker;

	private final Bulkhead bulkhead;

	private final FailureClassifier classifier;

	private final ChatRequest request;

	private final Consumer<Attempt> onAttempt;

	private final CallVolumeGuard guard;

	private final AtomicBoolean ended = new AtomicBoolean();

	// The window of the state that gave the permit: see CircuitBreakerPermit for why a permit must
	// go back only to the half-open state that gave it.
	private CircuitBreaker.@Nullable Metrics window;

	private final StringBuilder text = new StringBuilder();

	private final StringBuilder leading = new StringBuilder();

	private long start;

	private volatile long firstToken = -1;

	private volatile boolean started;

	private boolean emitting;

	private volatile @Nullable String finishReason;

	private @Nullable Usage usage;

	private @Nullable String model;

	private @Nullable CompletionDelta held;

	private Outcome outcome = Outcome.SUCCESS;

	StreamAttempt(EndpointSettings settings, LlmClient client, CircuitBreaker circuitBreaker, Bulkhead bulkhead,
			FailureClassifier classifier, ChatRequest request, Consumer<Attempt> onAttempt, CallVolumeGuard guard) {
		this.settings = settings;
		this.client = client;
		this.circuitBreaker = circuitBreaker;
		this.bulkhead = bulkhead;
		this.classifier = classifier;
		this.request = request;
		this.onAttempt = onAttempt;
		this.guard = guard;
	}

	Flux<CompletionDelta> run() {
		if (!this.circuitBreaker.tryAcquirePermission()) {
			this.onAttempt.accept(new Attempt(this.settings.name(), Outcome.BREAKER_OPEN, Duration.ZERO));
			return Flux.error(CallNotPermittedException.createCallNotPermittedException(this.circuitBreaker));
		}
		this.window = this.circuitBreaker.getMetrics();
		if (!this.bulkhead.tryAcquirePermission()) {
			releasePermission();
			this.onAttempt.accept(new Attempt(this.settings.name(), Outcome.BULKHEAD_FULL, Duration.ZERO));
			return Flux.error(BulkheadFullException.createBulkheadFullException(this.bulkhead));
		}
		this.start = now();
		return Flux.defer(() -> this.guard.tryAcquire() ? this.client.stream(this.request)
				: Flux.<CompletionDelta>error(LlmEndpoint.guardTripped(this.settings.name())))
			.doOnNext(this::track)
			.timeout(Mono.delay(this.settings.firstTokenTimeout()), this::nextTimeout,
					Flux.defer(() -> Flux.error(timeout())))
			.<CompletionDelta>handle(this::emit)
			.onErrorResume((error) -> {
				Throwable classified = this.classifier.classifyStreamError(this.settings.name(), error, this.started,
						this.text.toString(), this.finishReason);
				return (classified != null) ? Flux.error(classified) : Flux.empty();
			})
			.concatWith(Flux.defer(this::end))
			.doOnComplete(() -> finish(this.outcome, null))
			.doOnError((error) -> finish(FailureClassifier.outcomeOf(error), error))
			.doOnCancel(this::cancel);
	}

	private void track(CompletionDelta delta) {
		if (!this.started && delta.hasAnswer()) {
			this.firstToken = now();
			this.started = true;
		}
		this.text.append(delta.content());
		if (delta.finishReason() != null) {
			this.finishReason = delta.finishReason();
		}
		if (delta.usage() != null) {
			this.usage = delta.usage();
		}
		if (delta.model() != null) {
			this.model = delta.model();
		}
	}

	// Until the first token, every chunk (the role chunk, say) leaves the first-token clock running.
	private Mono<Long> nextTimeout(CompletionDelta delta) {
		if (this.started) {
			return Mono.delay(this.settings.streamIdleTimeout());
		}
		long left = this.start + this.settings.firstTokenTimeout().toNanos() - now();
		return Mono.delay(Duration.ofNanos(Math.max(0, left)));
	}

	private TimeoutException timeout() {
		return new TimeoutException(this.started
				? "no chunk for " + this.settings.streamIdleTimeout() + " (stream-idle-timeout)"
				: "no content within " + this.settings.firstTokenTimeout() + " (first-token-timeout)");
	}

	private void emit(CompletionDelta delta, SynchronousSink<CompletionDelta> sink) {
		CompletionDelta next = delta;
		if (!this.emitting) {
			if (!delta.hasAnswer()) {
				this.leading.append(delta.content());
				return;
			}
			this.emitting = true;
			next = delta.withContent(this.leading + delta.content());
		}
		if (next.finishReason() != null) {
			this.held = next;
		}
		else if (!next.content().isEmpty() || !next.toolCalls().isEmpty()) {
			sink.next(next.withUsage(null));
		}
	}

	private Flux<CompletionDelta> end() {
		this.outcome = this.classifier.classifyStreamEnd(this.settings.name(), this.started, this.finishReason);
		CompletionDelta last = this.held;
		if (last == null && this.usage == null) {
			return Flux.empty();
		}
		last = (last != null) ? last.withUsage(this.usage)
				: new CompletionDelta("", List.of(), null, this.usage, this.model);
		return Flux.just(last);
	}

	private void finish(Outcome outcome, @Nullable Throwable error) {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		long firstToken = this.firstToken;
		long end = now();
		long measured = ((firstToken >= 0) ? firstToken : end) - this.start;
		if (error != null) {
			// The breaker's predicates come from the FailureClassifier: it records or ignores the error;
			// an ignored one gives the permit back, which must not reach a half-open state that did not give it.
			boolean ignored = this.circuitBreaker.getCircuitBreakerConfig().getIgnoreExceptionPredicate().test(error);
			if (!ignored || ownsPermit()) {
				this.circuitBreaker.onError(measured, TimeUnit.NANOSECONDS, error);
			}
		}
		else if (outcome == Outcome.SUCCESS) {
			this.circuitBreaker.onSuccess(measured, TimeUnit.NANOSECONDS);
		}
		else {
			// A normal end that is neither a success nor a failure (a filtered answer): ignored.
			releasePermission();
		}
		this.bulkhead.onComplete();
		this.onAttempt.accept(new Attempt(this.settings.name(), outcome, Duration.ofNanos(end - this.start)));
	}

	private void cancel() {
		if (this.ended.compareAndSet(false, true)) {
			releasePermission();
			this.bulkhead.onComplete();
		}
	}

	private void releasePermission() {
		if (ownsPermit()) {
			this.circuitBreaker.releasePermission();
		}
	}

	private boolean ownsPermit() {
		return CircuitBreakerPermit.owns(this.circuitBreaker, this.window);
	}

	private static long now() {
		return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
	}

}
