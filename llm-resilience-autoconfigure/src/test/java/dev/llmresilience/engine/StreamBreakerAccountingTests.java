package dev.llmresilience.engine;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.engine.TestEndpoints.FakeClient;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.UpstreamFailures;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import static dev.llmresilience.engine.TestEndpoints.counted;
import static dev.llmresilience.engine.TestEndpoints.finished;
import static dev.llmresilience.engine.TestEndpoints.text;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * How one endpoint's stream takes and gives back its breaker and bulkhead permits, times out and
 * retries, driven by an in-process client under virtual time.
 */
class StreamBreakerAccountingTests {

	private static final Duration THIRTY_SECONDS = Duration.ofSeconds(30);

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");

	private final List<Attempt> attempts = new CopyOnWriteArrayList<>();

	@Test
	void anAttemptWithNoContentWithinTheFirstTokenTimeoutTimesOutAndIsRetried() {
		FakeClient client = new FakeClient(() -> Flux.just(text("")).concatWith(Flux.never()));
		LlmEndpoint endpoint = endpoint(client, 2, 5);
		StepVerifier.withVirtualTime(() -> endpoint.stream(REQUEST, this.attempts::add))
			.expectSubscription()
			.expectNoEvent(Duration.ofSeconds(29))
			.then(() -> assertThat(client.calls()).isEqualTo(1))
			.thenAwait(Duration.ofSeconds(1).plusMillis(1)) // the timeout, then the 1 ms backoff
			.then(() -> assertThat(client.calls()).isEqualTo(2))
			.expectNoEvent(Duration.ofSeconds(29))
			.thenAwait(Duration.ofSeconds(1))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(LlmUpstreamException.class)
				.hasMessageContaining("first-token-timeout")
				.extracting(FailureClassifier::outcomeOf)
				.isEqualTo(Outcome.TIMEOUT))
			.verify(Duration.ofSeconds(5));
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.TIMEOUT, Outcome.TIMEOUT);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfFailedCalls()).isEqualTo(2);
		assertBulkheadFull(endpoint);
	}

	@Test
	void silenceAfterTheFirstChunkIsAStallThatIsNeitherRetriedNorRestarted() {
		FakeClient client = new FakeClient(() -> Flux.just(text("Hel"), text("lo")).concatWith(Flux.never()));
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		StepVerifier.withVirtualTime(() -> endpoint.stream(REQUEST, this.attempts::add))
			.expectNextMatches((delta) -> delta.content().equals("Hel"))
			.expectNextMatches((delta) -> delta.content().equals("lo"))
			.expectNoEvent(Duration.ofSeconds(29))
			.thenAwait(Duration.ofSeconds(1))
			.expectErrorSatisfies((error) -> {
				assertThat(error).isInstanceOf(LlmStreamInterruptedException.class)
					.hasMessageContaining("stream-idle-timeout");
				LlmStreamInterruptedException stalled = (LlmStreamInterruptedException) error;
				assertThat(stalled.outcome()).isEqualTo(Outcome.STREAM_STALLED);
				assertThat(stalled.partial()).isEqualTo("Hello");
				assertThat(stalled.endpoint()).isEqualTo("primary");
			})
			.verify(Duration.ofSeconds(5));
		assertThat(client.calls()).isEqualTo(1);
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.STREAM_STALLED);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
		assertBulkheadFull(endpoint);
	}

	@Test
	void aCallerWhoStopsReadingIsNotAStalledProviderAndReadsTheRestWhenItAsks() {
		FakeClient client = new FakeClient(() -> Flux.just(text("Hel"), text("lo"), finished("stop")));
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		StepVerifier.withVirtualTime(() -> endpoint.stream(REQUEST, this.attempts::add), 1)
			.expectNextMatches((delta) -> delta.content().equals("Hel"))
			// the provider has sent all of it; the caller reads nothing for two minutes
			.expectNoEvent(Duration.ofMinutes(2))
			.thenRequest(10)
			.expectNextMatches((delta) -> delta.content().equals("lo"))
			.expectNextMatches((delta) -> "stop".equals(delta.finishReason()))
			.verifyComplete();
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfFailedCalls()).isZero();
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(1);
		assertBulkheadFull(endpoint);
	}

	@Test
	void aProviderSilentAfterTheCallerAsksAgainIsStillAStall() {
		FakeClient client = new FakeClient(() -> Flux.just(text("Hel")).concatWith(Flux.never()));
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		StepVerifier.withVirtualTime(() -> endpoint.stream(REQUEST, this.attempts::add), 1)
			.expectNextMatches((delta) -> delta.content().equals("Hel"))
			.expectNoEvent(Duration.ofMinutes(2))
			.thenRequest(1)
			// the idle bound counts from the caller's request, not from the last chunk
			.expectNoEvent(Duration.ofSeconds(29))
			.thenAwait(Duration.ofSeconds(1))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(LlmStreamInterruptedException.class)
				.hasMessageContaining("stream-idle-timeout"))
			.verify(Duration.ofSeconds(5));
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.STREAM_STALLED);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
	}

	@Test
	void aFiveMinuteSteadyStreamSucceedsAndCountsAsOneSuccessThatIsNotSlow() {
		FakeClient client = new FakeClient(() -> Flux.interval(Duration.ofSeconds(10))
			.take(30)
			.map((tick) -> text("t" + tick + " "))
			.concatWith(Flux.just(finished("stop"), counted(5, 30))));
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		StepVerifier.withVirtualTime(() -> endpoint.stream(REQUEST, this.attempts::add))
			.expectSubscription()
			.expectNoEvent(Duration.ofSeconds(10))
			.expectNextCount(1)
			.thenAwait(Duration.ofMinutes(5))
			.expectNextCount(29)
			.expectNextMatches((last) -> last.content().isEmpty() && "stop".equals(last.finishReason())
					&& new Usage(5, 30).equals(last.usage()))
			.verifyComplete();
		CircuitBreaker.Metrics metrics = endpoint.circuitBreaker().getMetrics();
		assertThat(metrics.getNumberOfSuccessfulCalls()).isEqualTo(1);
		assertThat(metrics.getNumberOfFailedCalls()).isZero();
		assertThat(metrics.getNumberOfSlowCalls()).isZero();
		assertThat(client.calls()).isEqualTo(1);
		assertThat(this.attempts).singleElement().satisfies((attempt) -> {
			assertThat(attempt.outcome()).isEqualTo(Outcome.SUCCESS);
			assertThat(attempt.duration()).isEqualTo(Duration.ofMinutes(5));
		});
		assertBulkheadFull(endpoint);
	}

	@Test
	void aCancelMidStreamRecordsNothingAndReleasesBothPermits() {
		AtomicBoolean upstreamCancelled = new AtomicBoolean();
		FakeClient client = new FakeClient(() -> Flux.just(text("a"), text("b"))
			.concatWith(Flux.never())
			.doOnCancel(() -> upstreamCancelled.set(true)));
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
			.expectNextCount(2)
			.then(() -> assertThat(endpoint.bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(4))
			.thenCancel()
			.verify(Duration.ofSeconds(5));
		CircuitBreaker.Metrics metrics = endpoint.circuitBreaker().getMetrics();
		assertThat(metrics.getNumberOfBufferedCalls()).isZero();
		assertThat(metrics.getNumberOfSuccessfulCalls()).isZero();
		assertThat(metrics.getNumberOfFailedCalls()).isZero();
		assertThat(metrics.getNumberOfNotPermittedCalls()).isZero();
		assertThat(upstreamCancelled).isTrue();
		assertThat(this.attempts).isEmpty();
		assertBulkheadFull(endpoint);
	}

	@Test
	void aCancelGivesAHalfOpenBreakerItsProbeBack() {
		FakeClient client = new FakeClient(() -> Flux.just(text("a")).concatWith(Flux.never()));
		LlmEndpoint endpoint = endpoint(client, 1, 5);
		endpoint.circuitBreaker().transitionToOpenState();
		endpoint.circuitBreaker().transitionToHalfOpenState();
		for (int i = 0; i < 4; i++) {
			StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
				.expectNextCount(1)
				.thenCancel()
				.verify(Duration.ofSeconds(5));
		}
		assertThat(client.calls()).isEqualTo(4);
		assertThat(endpoint.circuitBreaker().getState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfBufferedCalls()).isZero();
	}

	@Test
	void resilience4jsReactorOperatorWouldCountTheSameCancelAsASuccess() {
		// Why StreamAttempt takes the breaker's permit by hand.
		CircuitBreaker breaker = CircuitBreaker.ofDefaults("operator");
		StepVerifier.create(Flux.just("a", "b").concatWith(Flux.never()).transformDeferred(CircuitBreakerOperator.of(breaker)))
			.expectNextCount(2)
			.thenCancel()
			.verify(Duration.ofSeconds(5));
		assertThat(breaker.getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(1);
	}

	@Test
	void theBulkheadCountsConcurrentStreams() {
		FakeClient client = new FakeClient(() -> Flux.just(text("a")).concatWith(Flux.never()));
		LlmEndpoint endpoint = endpoint(client, 3, 1);
		List<CompletionDelta> first = new CopyOnWriteArrayList<>();
		Disposable open = endpoint.stream(REQUEST, this.attempts::add).subscribe(first::add);
		assertThat(first).hasSize(1);
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
			.expectError(BulkheadFullException.class)
			.verify(Duration.ofSeconds(5));
		assertThat(client.calls()).isEqualTo(1);
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.BULKHEAD_FULL);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfBufferedCalls()).isZero();
		open.dispose();
		assertBulkheadFull(endpoint);
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
			.expectNextCount(1)
			.thenCancel()
			.verify(Duration.ofSeconds(5));
		assertThat(client.calls()).isEqualTo(2);
	}

	@Test
	void anOpenBreakerRefusesAStreamWithoutCalling() {
		FakeClient client = new FakeClient(() -> Flux.just(text("a")));
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		endpoint.circuitBreaker().transitionToOpenState();
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
			.expectError(CallNotPermittedException.class)
			.verify(Duration.ofSeconds(5));
		assertThat(client.calls()).isZero();
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.BREAKER_OPEN);
		assertBulkheadFull(endpoint);
	}

	@ParameterizedTest
	@ValueSource(strings = { "reset", "error-event", "truncated" })
	void aFailureAfterTheFirstChunkIsABreakerFailureAndIsNeverRetried(String fault) {
		UpstreamFailures failures = new UpstreamFailures(Clock.systemUTC());
		Throwable error = switch (fault) {
			case "reset" -> new IOException("Connection reset by peer");
			case "error-event" -> new LlmUpstreamException("primary", Outcome.SERVER_ERROR, 500, null, "Overloaded", null);
			default -> failures.truncatedStream("primary");
		};
		FakeClient client = new FakeClient(() -> Flux.just(text(""), text("Hi"), text(" there")).concatWith(Flux.error(error)));
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
			.expectNextCount(2)
			.expectErrorSatisfies((failure) -> {
				assertThat(failure).isInstanceOf(LlmStreamInterruptedException.class);
				assertThat(FailureClassifier.outcomeOf(failure.getCause()))
					.isEqualTo(fault.equals("error-event") ? Outcome.SERVER_ERROR : Outcome.CONNECTION_FAILED);
				LlmStreamInterruptedException interrupted = (LlmStreamInterruptedException) failure;
				assertThat(interrupted.outcome()).isEqualTo(Outcome.STREAM_INTERRUPTED);
				assertThat(interrupted.partial()).isEqualTo("Hi there");
				assertThat(interrupted.getMessage()).contains("resume-on-fallback");
			})
			.verify(Duration.ofSeconds(5));
		assertThat(client.calls()).isEqualTo(1);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfFailedCalls()).isEqualTo(1);
		assertBulkheadFull(endpoint);
	}

	@Test
	void failuresBeforeTheFirstChunkAreRetriedUnseen() {
		AtomicInteger attempt = new AtomicInteger();
		Supplier<Flux<CompletionDelta>> stream = () -> (attempt.incrementAndGet() < 3)
				? Flux.just(text(""), text(" ")).concatWith(Flux.error(new IOException("Connection reset")))
				: Flux.just(text(""), text("Third"), text(" time"), finished("stop"));
		FakeClient client = new FakeClient(stream);
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
			.expectNextMatches((delta) -> delta.content().equals("Third"))
			.expectNextMatches((delta) -> delta.content().equals(" time"))
			.expectNextMatches((delta) -> "stop".equals(delta.finishReason()))
			.verifyComplete();
		assertThat(this.attempts).extracting(Attempt::outcome)
			.containsExactly(Outcome.CONNECTION_FAILED, Outcome.CONNECTION_FAILED, Outcome.SUCCESS);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfFailedCalls()).isEqualTo(2);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(1);
	}

	@Test
	void leadingWhitespaceWaitsForTheFirstTokenAndTheLastChunkCarriesFinishReasonAndUsage() {
		FakeClient client = new FakeClient(
				() -> Flux.just(text(""), text("\n"), text("Hi"), text(" "), text("you"), finished("stop"), counted(3, 4)));
		StepVerifier.create(endpoint(client, 3, 5).stream(REQUEST, this.attempts::add))
			.expectNext(text("\nHi"), text(" "), text("you"))
			.expectNext(new CompletionDelta("", List.of(), "stop", new Usage(3, 4), null))
			.verifyComplete();
	}

	@Test
	void aConnectionLostAfterTheFinishReasonStillEndsTheStreamAsASuccess() {
		FakeClient client = new FakeClient(() -> Flux.just(text("Done"), finished("stop"))
			.concatWith(Flux.error(new IOException("Connection reset by peer"))));
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
			.expectNext(text("Done"))
			.expectNextMatches((delta) -> "stop".equals(delta.finishReason()) && delta.usage() == null)
			.verifyComplete();
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(1);
	}

	@Test
	void aStreamWithNoContentIsAnEmptyResponseAndIsRetried() {
		FakeClient client = new FakeClient(() -> Flux.just(text(""), text("  "), finished("stop"), counted(3, 0)));
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
			.expectErrorSatisfies((error) -> assertThat(FailureClassifier.outcomeOf(error)).isEqualTo(Outcome.EMPTY_RESPONSE))
			.verify(Duration.ofSeconds(5));
		assertThat(client.calls()).isEqualTo(3);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfFailedCalls()).isEqualTo(3);
	}

	@Test
	void aContentFilterThatCutsTheAnswerEndsTheStreamAndIsIgnoredByTheBreaker() {
		FakeClient client = new FakeClient(() -> Flux.just(text("Once upon"), finished("content_filter")));
		LlmEndpoint endpoint = endpoint(client, 3, 5);
		StepVerifier.create(endpoint.stream(REQUEST, this.attempts::add))
			.expectNext(text("Once upon"))
			.expectNextMatches((delta) -> "content_filter".equals(delta.finishReason()))
			.verifyComplete();
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfBufferedCalls()).isZero();
		assertThat(this.attempts).extracting(Attempt::outcome).containsExactly(Outcome.CONTENT_FILTERED);
		assertBulkheadFull(endpoint);
	}

	private static LlmEndpoint endpoint(FakeClient client, int maxAttempts, int maxConcurrentCalls) {
		return TestEndpoints.endpoint(TestEndpoints.settings("primary", "http://localhost:1/v1", THIRTY_SECONDS,
				THIRTY_SECONDS, maxAttempts, maxConcurrentCalls), client);
	}

	private static void assertBulkheadFull(LlmEndpoint endpoint) {
		assertThat(endpoint.bulkhead().getMetrics().getAvailableConcurrentCalls())
			.isEqualTo(endpoint.bulkhead().getMetrics().getMaxAllowedConcurrentCalls());
	}

}
