package dev.llmresilience.engine;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.engine.TestEndpoints.FakeClient;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings.Limits;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.retry.Retry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import static dev.llmresilience.engine.TestEndpoints.counted;
import static dev.llmresilience.engine.TestEndpoints.finished;
import static dev.llmresilience.engine.TestEndpoints.text;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * One endpoint call as its caller and the endpoint's Resilience4j instances see it: the retry's
 * metrics count each call once by how it ended, a subscriber's demand is honoured (a stream read a
 * chunk at a time gets every chunk, and its last waits for demand), an attempt is not started at its
 * deadline, and a half-open breaker's probe refused by a full bulkhead is given back.
 */
class EndpointCallTests {

	private static final ChatRequest REQUEST = ChatRequest.ofUser("hello");

	private static final LlmUpstreamException SERVER_ERROR = new LlmUpstreamException("call", Outcome.SERVER_ERROR, 500,
			null, "Provider error (HTTP 500)", null);

	private final Deque<Flux<CompletionDelta>> answers = new ArrayDeque<>();

	private final FakeClient client = new FakeClient(() -> this.answers.isEmpty() ? Flux.never() : this.answers.poll());

	private final List<Attempt> attempts = new CopyOnWriteArrayList<>();

	@AfterEach
	void resetTime() {
		VirtualTimeScheduler.reset();
	}

	@Test
	void retryMetricsCountEachCallOnceByHowItEnded() {
		LlmEndpoint endpoint = endpoint(3, 3, 5);
		// a success at once, a success after a retry, a failure after every retry, a failure never retried
		this.answers.add(answer("at once"));
		this.answers.add(Flux.error(SERVER_ERROR));
		this.answers.add(answer("second try"));
		for (int i = 0; i < 3; i++) {
			this.answers.add(Flux.error(SERVER_ERROR));
		}
		this.answers.add(Flux.error(new LlmUpstreamException("call", Outcome.INVALID_REQUEST, 400, null,
				"Invalid request (HTTP 400)", null)));
		for (int i = 0; i < 4; i++) {
			endpoint.chat(REQUEST, this.attempts::add).onErrorResume((error) -> Mono.empty()).block(Duration.ofSeconds(5));
		}
		Retry.Metrics metrics = endpoint.retry().getMetrics();
		assertThat(metrics.getNumberOfSuccessfulCallsWithoutRetryAttempt()).isOne();
		assertThat(metrics.getNumberOfSuccessfulCallsWithRetryAttempt()).isOne();
		assertThat(metrics.getNumberOfFailedCallsWithRetryAttempt()).isOne();
		assertThat(metrics.getNumberOfFailedCallsWithoutRetryAttempt()).isOne();
		assertThat(this.client.calls()).isEqualTo(7);
	}

	@Test
	void streamReadOneChunkAtATimeGetsEveryChunk() {
		LlmEndpoint endpoint = endpoint(1, 3, 5);
		this.answers.add(Flux.just(text(""), text("a"), text("b"), finished("stop"), counted(3, 4)));
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add), 1)
			.expectNext(text("a"))
			.thenRequest(1)
			.expectNext(text("b"))
			.thenRequest(1)
			.expectNext(new CompletionDelta("", List.of(), "stop", new Usage(3, 4), null))
			.expectComplete()
			.verify(Duration.ofSeconds(5));
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
	}

	@Test
	void streamReadOneChunkAtATimeIsHandedOnlyWhatItAskedFor() {
		LlmEndpoint endpoint = endpoint(1, 3, 5);
		this.answers.add(Flux.just(text("a"), text("b"), text("c"), finished("stop")));
		List<String> received = new CopyOnWriteArrayList<>();
		BaseSubscriber<CompletionDelta> one = new BaseSubscriber<>() {

			@Override
			protected void hookOnSubscribe(Subscription subscription) {
				subscription.request(1);
			}

			@Override
			protected void hookOnNext(CompletionDelta delta) {
				received.add(delta.content());
			}

		};
		endpoint.stream(REQUEST, this.attempts::add).subscribe(one);
		assertThat(received).containsExactly("a");
		one.request(2);
		assertThat(received).containsExactly("a", "b", "c");
		assertThat(this.attempts).as("the answer has not ended").isEmpty();
		one.request(1);
		assertThat(received).containsExactly("a", "b", "c", "");
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
	}

	@Test
	void lastChunkWaitsForDemandWhenTheUpstreamSentItUnasked() {
		LlmEndpoint endpoint = endpoint(1, 3, 5);
		// a provider's chunks that came in one read: pushed whatever the demand
		this.answers.add(Flux.create((sink) -> {
			sink.next(text("a"));
			sink.next(finished("stop"));
			sink.complete();
		}, FluxSink.OverflowStrategy.IGNORE));
		List<String> received = new CopyOnWriteArrayList<>();
		BaseSubscriber<CompletionDelta> one = new BaseSubscriber<>() {

			@Override
			protected void hookOnSubscribe(Subscription subscription) {
				subscription.request(1);
			}

			@Override
			protected void hookOnNext(CompletionDelta delta) {
				received.add(delta.content() + "|" + delta.finishReason());
			}

			@Override
			protected void hookOnComplete() {
				received.add("complete");
			}

		};
		endpoint.stream(REQUEST, this.attempts::add).subscribe(one);
		assertThat(received).containsExactly("a|null");
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
		one.request(1);
		assertThat(received).containsExactly("a|null", "|stop", "complete");
	}

	@Test
	void clientThatThrowsInsteadOfAnsweringFailsTheAttemptAndFreesItsPermits() {
		LlmClient throwing = new LlmClient() {

			@Override
			public Mono<Completion> chat(ChatRequest request) {
				throw new IllegalStateException("client closed");
			}

			@Override
			public Flux<CompletionDelta> stream(ChatRequest request) {
				throw new IllegalStateException("client closed");
			}

		};
		LlmEndpoint endpoint = TestEndpoints.endpoint(settings(2, 3, 5), throwing);
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
			.expectErrorSatisfies((error) -> assertThat(error).hasStackTraceContaining("client closed"))
			.verify(Duration.ofSeconds(5));
		assertThat(this.attempts).isNotEmpty().noneMatch((attempt) -> attempt.outcome() == Outcome.SUCCESS);
		assertThat(endpoint.bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(5);
	}

	@Test
	void attemptIsNotStartedAtItsDeadline() {
		LlmEndpoint endpoint = endpoint(3, 3, 5);
		this.answers.add(answer("too late"));
		StepVerifier.withVirtualTime(() -> {
			long now = VirtualTimeScheduler.get().now(TimeUnit.NANOSECONDS);
			return endpoint.chat(REQUEST, new CallContext((attempt, completion) -> this.attempts.add(attempt), null, now,
					now, CallVolumeGuard.off(), () -> false));
		}).expectErrorSatisfies((error) -> assertThat(error).hasMessageContaining("deadline ran out before this attempt"))
			.verify(Duration.ofSeconds(5));
		assertThat(this.client.calls()).isZero();
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.DEADLINE_EXCEEDED);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfBufferedCalls()).isZero();
	}

	@Test
	void halfOpenProbeRefusedByAFullBulkheadIsGivenBack() {
		LlmEndpoint endpoint = endpoint(1, 1, 1);
		this.answers.add(Flux.just(text("long")).concatWith(Flux.never()));
		Disposable held = endpoint.stream(REQUEST, this.attempts::add).subscribe();
		CircuitBreaker breaker = endpoint.circuitBreaker();
		breaker.transitionToOpenState();
		breaker.transitionToHalfOpenState();
		StepVerifier.create(endpoint.chat(REQUEST, this.attempts::add))
			.expectError(BulkheadFullException.class)
			.verify(Duration.ofSeconds(5));
		held.dispose();
		this.answers.add(answer("probe"));
		StepVerifier.create(endpoint.chat(REQUEST, this.attempts::add))
			.assertNext((answer) -> assertThat(answer.content()).isEqualTo("probe"))
			.verifyComplete();
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.BULKHEAD_FULL, Outcome.SUCCESS);
		assertThat(breaker.getState()).as("the one probe succeeded").isEqualTo(CircuitBreaker.State.CLOSED);
	}

	private static Flux<CompletionDelta> answer(String text) {
		return Flux.just(text(text), finished("stop"));
	}

	private LlmEndpoint endpoint(int maxAttempts, int probes, int maxConcurrentCalls) {
		return TestEndpoints.endpoint(settings(maxAttempts, probes, maxConcurrentCalls), this.client);
	}

	private static EndpointSettings settings(int maxAttempts, int probes, int maxConcurrentCalls) {
		return EndpointSettings.builder("call", URI.create("http://127.0.0.1:9/v1"), "call-model")
			.timeouts(new EndpointSettings.Timeouts(Duration.ofSeconds(60), Duration.ofSeconds(5), Duration.ofSeconds(30),
					Duration.ofSeconds(30), true))
			.limits(Limits.DEFAULT.withMaxResponseSize(1 << 20))
			.circuitBreaker(new EndpointSettings.CircuitBreakerSettings(20, 20, 50f, Duration.ofSeconds(30), probes,
					Duration.ofSeconds(60), 100f))
			.retry(new EndpointSettings.RetrySettings(maxAttempts, Duration.ofMillis(1), 2.0, Duration.ofMillis(4), 0,
					Duration.ofSeconds(10)))
			.bulkhead(new EndpointSettings.BulkheadSettings(maxConcurrentCalls, Duration.ZERO))
			.build();
	}

}
