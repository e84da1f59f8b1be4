package dev.llmresilience.engine;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.engine.TestEndpoints.FakeClient;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ApiKey;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

import static dev.llmresilience.engine.TestEndpoints.finished;
import static dev.llmresilience.engine.TestEndpoints.text;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A closed breaker counts its calls in the order they started ({@link StartOrder}), in virtual time
 * with an in-process client whose answers take 400 ms and whose 500s come back at once, at the
 * documented defaults (a window of 20, open at 50 %).
 */
class StartOrderTests {

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");

	private static final Duration ANSWER = Duration.ofMillis(400);

	@Test
	void aThousandCallsStartedAtOnceWithFivePercentInstant500sLeaveTheBreakerClosed() {
		LlmEndpoint endpoint = endpoint(EndpointSettings.CircuitBreakerSettings.DEFAULT_START_ORDER_WAIT,
				(call) -> (call % 20 == 10) ? serverError() : answerAfter(ANSWER));
		StepVerifier.withVirtualTime(() -> burst(endpoint, 1000))
			.thenAwait(ANSWER.plusMillis(1))
			.expectNext(950L)
			.verifyComplete();
		CircuitBreaker breaker = endpoint.circuitBreaker();
		assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
		assertThat(breaker.getMetrics().getFailureRate()).as("the last 20 started: one failed").isEqualTo(5f);
		assertThat(endpoint.startOrder().held()).isZero();
	}

	@Test
	void inTheOrderTheyEndTheSameBurstsFailuresFillTheWindowFirstAndOpenIt() {
		LlmEndpoint endpoint = endpoint(Duration.ZERO, (call) -> (call % 20 == 10) ? serverError() : answerAfter(ANSWER));
		// calls 10, 30, ... 390 fail at once, the 20 first outcomes: the breaker opens, the calls after
		// 390 are refused, and the ones waiting for their first token are released
		StepVerifier.withVirtualTime(() -> burst(endpoint, 1000))
			.thenAwait(ANSWER.plusMillis(1))
			.expectNext(0L)
			.verifyComplete();
		assertThat(endpoint.circuitBreaker().getState()).as("Resilience4j's own order: 20 failures first")
			.isEqualTo(CircuitBreaker.State.OPEN);
	}

	@Test
	void anOutageOfInstantFailuresOpensTheBreakerAtOnceWhenNothingStartedBeforeThem() {
		LlmEndpoint endpoint = endpoint(EndpointSettings.CircuitBreakerSettings.DEFAULT_START_ORDER_WAIT,
				(call) -> serverError());
		StepVerifier.withVirtualTime(() -> Flux.range(0, 20).concatMap((i) -> answered(endpoint)).count())
			.expectNext(0L)
			.verifyComplete();
		assertThat(endpoint.circuitBreaker().getState()).isEqualTo(CircuitBreaker.State.OPEN);
	}

	@Test
	void behindACallStillRunningTheFailuresAreHeldAtMostTheWaitAndThenOpenTheBreaker() {
		// call 0 takes a minute; the 20 after it fail at once, a second later, and no call comes after them
		LlmEndpoint endpoint = endpoint(EndpointSettings.CircuitBreakerSettings.DEFAULT_START_ORDER_WAIT,
				(call) -> (call == 0) ? answerAfter(Duration.ofMinutes(1)) : serverError());
		CircuitBreaker breaker = endpoint.circuitBreaker();
		StepVerifier.withVirtualTime(() -> answered(endpoint)
			.mergeWith(Mono.delay(Duration.ofSeconds(1)).thenMany(Flux.range(0, 20).concatMap((i) -> answered(endpoint))))
			.count())
			.thenAwait(Duration.ofSeconds(1))
			.then(() -> {
				assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
				assertThat(breaker.getMetrics().getNumberOfFailedCalls()).as("held behind the call started first").isZero();
				assertThat(endpoint.startOrder().held()).isEqualTo(20);
				assertThat(describe(endpoint).breaker().heldCalls()).as("what /actuator/llmbreakers shows").isEqualTo(20);
			})
			.thenAwait(Duration.ofSeconds(5).minusMillis(1))
			.then(() -> assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED))
			.thenAwait(Duration.ofMillis(1))
			.then(() -> {
				assertThat(breaker.getState()).as("let go 5 s after they ended").isEqualTo(CircuitBreaker.State.OPEN);
				assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isEqualTo(20);
				assertThat(endpoint.startOrder().held()).isZero();
			})
			.as("the call of a minute was waiting for its first token when the breaker opened: released")
			.expectNext(0L)
			.verifyComplete();
	}

	@Test
	void behindAStreamOfAnHourOnlyTheLastWaitsOutcomesAreHeld() {
		// call 0 runs for an hour; then one call every 100 ms for a minute, each answered at once
		LlmEndpoint endpoint = endpoint(EndpointSettings.CircuitBreakerSettings.DEFAULT_START_ORDER_WAIT,
				(call) -> (call == 0) ? answerAfter(Duration.ofHours(1)) : answerAfter(Duration.ZERO));
		AtomicInteger mostHeld = new AtomicInteger();
		StepVerifier.withVirtualTime(() -> answered(endpoint)
			.mergeWith(Flux.interval(Duration.ofMillis(100)).take(600).concatMap((i) -> answered(endpoint))
				.doOnNext((answer) -> mostHeld.accumulateAndGet(endpoint.startOrder().held(), Math::max)))
			.count())
			.thenAwait(Duration.ofMinutes(1))
			.then(() -> {
				assertThat(mostHeld.get()).as("5 s of outcomes at 10 a second").isBetween(49, 51);
				assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfSuccessfulCalls())
					.as("the window full of the calls let go").isEqualTo(20);
			})
			.thenAwait(Duration.ofHours(1))
			.expectNext(601L)
			.verifyComplete();
		assertThat(endpoint.startOrder().held()).isZero();
	}

	@Test
	void whatTheClosedWindowHeldIsLetGoWhenTheBreakerLeavesItAndTheNextWindowStartsEmpty() {
		// call 0 takes a minute; the five after it are answered at once and held behind it
		LlmEndpoint endpoint = endpoint(EndpointSettings.CircuitBreakerSettings.DEFAULT_START_ORDER_WAIT,
				(call) -> (call == 0) ? answerAfter(Duration.ofMinutes(1)) : answerAfter(Duration.ZERO));
		CircuitBreaker breaker = endpoint.circuitBreaker();
		StepVerifier.withVirtualTime(() -> answered(endpoint)
			.mergeWith(Mono.delay(Duration.ofSeconds(1)).thenMany(Flux.range(0, 5).concatMap((i) -> answered(endpoint))))
			.count())
			.thenAwait(Duration.ofSeconds(1))
			.then(() -> {
				assertThat(endpoint.startOrder().held()).isEqualTo(5);
				breaker.transitionToForcedOpenState();
				assertThat(endpoint.startOrder().held()).as("let go into the forced-open state").isZero();
				breaker.transitionToClosedState();
				assertThat(breaker.getMetrics().getNumberOfBufferedCalls()).as("the new window").isZero();
			})
			.thenAwait(Duration.ofMinutes(1))
			.as("call 0 was released by the forced open; the five were answered")
			.expectNext(5L)
			.verifyComplete();
		assertThat(breaker.getMetrics().getNumberOfBufferedCalls()).as("nothing of the old window reached the new one")
			.isZero();
	}

	@Test
	void aCancelledCallHoldsNothingBackAndIsNotCounted() {
		LlmEndpoint endpoint = endpoint(EndpointSettings.CircuitBreakerSettings.DEFAULT_START_ORDER_WAIT,
				(call) -> (call == 0) ? answerAfter(Duration.ofMinutes(1)) : serverError());
		CircuitBreaker breaker = endpoint.circuitBreaker();
		StepVerifier.withVirtualTime(() -> answered(endpoint).take(Duration.ofSeconds(1))
			.thenMany(Flux.range(0, 20).concatMap((i) -> answered(endpoint)))
			.count())
			.thenAwait(Duration.ofSeconds(1))
			.expectNext(0L)
			.verifyComplete();
		assertThat(breaker.getState()).as("the cancelled call held none of the failures after it").isEqualTo(CircuitBreaker.State.OPEN);
		assertThat(breaker.getMetrics().getNumberOfBufferedCalls()).isEqualTo(20);
	}

	private static LlmBreakersEndpoint.EndpointDescriptor describe(LlmEndpoint endpoint) {
		EndpointRegistry registry = new EndpointRegistry(List.of(endpoint), Map.of("default", List.of("ordered")), List.of());
		return new EndpointDescriptions(new BreakerTransitions(registry), new EndpointHistory(registry, Clock.systemUTC()))
			.describe(endpoint);
	}

	// the answers of n calls started at once, counted
	private static Mono<Long> burst(LlmEndpoint endpoint, int n) {
		return Flux.range(0, n).flatMap((i) -> answered(endpoint), n).count();
	}

	// one call's answer, or nothing when it failed or was refused
	private static Mono<Completion> answered(LlmEndpoint endpoint) {
		return endpoint.chat(REQUEST, (attempt) -> {
		}).onErrorResume((error) -> Mono.empty());
	}

	private static Flux<CompletionDelta> answerAfter(Duration delay) {
		Flux<CompletionDelta> answer = Flux.just(text("answer"), finished("stop"));
		return delay.isZero() ? answer : answer.delaySubscription(delay);
	}

	private static Flux<CompletionDelta> serverError() {
		return Flux.error(new LlmUpstreamException("ordered", Outcome.SERVER_ERROR, 500, null, "Overloaded", null));
	}

	// the documented breaker defaults but the wait, one attempt a call, room for every call at once
	private static LlmEndpoint endpoint(Duration startOrderWait, IntFunction<Flux<CompletionDelta>> answers) {
		AtomicInteger calls = new AtomicInteger();
		EndpointSettings.CircuitBreakerSettings defaults = TestEndpoints.DEFAULT_BREAKER;
		EndpointSettings settings = EndpointSettings.builder("ordered", URI.create("http://127.0.0.1:9/v1"), "m-ordered")
			.apiKey(ApiKey.of("sk-test-123456789"))
			.timeouts(new EndpointSettings.Timeouts(Duration.ofHours(2), Duration.ofSeconds(5), Duration.ofHours(2),
					Duration.ofHours(2), true))
			.circuitBreaker(new EndpointSettings.CircuitBreakerSettings(defaults.slidingWindowSize(),
					defaults.minimumNumberOfCalls(), defaults.failureRateThreshold(), defaults.waitDurationInOpenState(),
					defaults.permittedCallsInHalfOpenState(), defaults.slowCallDurationThreshold(),
					defaults.slowCallRateThreshold(), EndpointSettings.Probe.REQUESTS, startOrderWait))
			.retry(new EndpointSettings.RetrySettings(1, Duration.ofMillis(1), 2.0, Duration.ofSeconds(8), 0,
					Duration.ofSeconds(10)))
			.bulkhead(new EndpointSettings.BulkheadSettings(1000, Duration.ZERO))
			.build();
		return TestEndpoints.endpoint(settings, new FakeClient(() -> answers.apply(calls.getAndIncrement())));
	}

}
