package dev.llmresilience.engine;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.engine.TestEndpoints.FakeClient;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings.Limits;
import dev.llmresilience.protocol.CompletionDelta;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

import static dev.llmresilience.engine.TestEndpoints.finished;
import static dev.llmresilience.engine.TestEndpoints.text;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The library's own probes in virtual time: one that could not be sent (its bulkhead full) is sent
 * again a second later while the same half-open state lasts, and not once that state has ended; a
 * disabled endpoint is not probed; what each probe sent ended as shows in the endpoint's probe stats.
 */
class SyntheticProbeResendTests {

	private final VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();

	private final Deque<Flux<CompletionDelta>> answers = new ArrayDeque<>();

	private final FakeClient client = new FakeClient(() -> this.answers.isEmpty() ? Flux.never() : this.answers.poll());

	private final TestEndpoints endpoints = new TestEndpoints(() -> 0.5);

	@AfterEach
	void resetTime() {
		VirtualTimeScheduler.reset();
	}

	@Test
	void probeRefusedByAFullBulkheadIsSentASecondLater() {
		LlmEndpoint endpoint = endpoint(true);
		Disposable held = holdTheBulkhead(endpoint);
		halfOpen(endpoint);
		this.time.advanceTime();
		assertThat(this.client.calls()).as("the probe found the bulkhead full").isOne();
		held.dispose();
		this.answers.add(Flux.just(text("Hi"), finished("stop")));
		this.time.advanceTimeBy(Duration.ofMillis(999));
		assertThat(this.client.calls()).isOne();
		this.time.advanceTimeBy(Duration.ofMillis(1));
		assertThat(this.client.calls()).as("sent again").isEqualTo(2);
		ProbeStats probes = endpoint.probes();
		assertThat(probes.sent()).as("a probe that was not sent is not counted").isOne();
		assertThat(probes.succeeded()).isOne();
		assertThat(probes.failed()).isZero();
		assertThat(probes.lastOutcome()).isEqualTo(Outcome.SUCCESS);
		assertThat(probes.lastAt()).isEqualTo(this.endpoints.clock().instant());
		assertThat(endpoint.circuitBreaker().getState()).isEqualTo(State.CLOSED);
	}

	@Test
	void probeRefusedForAHalfOpenStateThatHasEndedIsNotSentAgain() {
		LlmEndpoint endpoint = endpoint(true);
		Disposable held = holdTheBulkhead(endpoint);
		halfOpen(endpoint);
		this.time.advanceTime();
		held.dispose();
		endpoint.circuitBreaker().transitionToOpenState();
		this.time.advanceTimeBy(Duration.ofSeconds(5));
		assertThat(this.client.calls()).as("only the held call").isOne();
		assertThat(endpoint.probes().sent()).isZero();
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfNotPermittedCalls())
			.as("no probe asked the open breaker for a permit").isZero();
	}

	@Test
	void probeRefusedForAnEarlierHalfOpenStateIsNotSentIntoALaterOne() {
		LlmEndpoint endpoint = endpoint(true);
		Disposable held = holdTheBulkhead(endpoint);
		halfOpen(endpoint);
		this.time.advanceTime();
		// a second episode begins before the resend: its own probe goes (and is still out), the earlier
		// one does not ask the new state for a permit
		endpoint.circuitBreaker().transitionToOpenState();
		held.dispose();
		halfOpen(endpoint);
		this.time.advanceTime();
		assertThat(this.client.calls()).isEqualTo(2);
		this.time.advanceTimeBy(Duration.ofSeconds(5));
		assertThat(this.client.calls()).isEqualTo(2);
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfNotPermittedCalls())
			.as("no resend for the earlier half-open state").isZero();
	}

	@Test
	void failedProbeIsCountedAsFailedWithItsOutcome() {
		LlmEndpoint endpoint = endpoint(true);
		this.answers.add(Flux.error(new LlmUpstreamException("probed", Outcome.SERVER_ERROR, 503, null, "down", null)));
		halfOpen(endpoint);
		this.time.advanceTime();
		ProbeStats probes = endpoint.probes();
		assertThat(probes.sent()).isOne();
		assertThat(probes.failed()).isOne();
		assertThat(probes.succeeded()).isZero();
		assertThat(probes.lastOutcome()).isEqualTo(Outcome.SERVER_ERROR);
		assertThat(endpoint.circuitBreaker().getState()).isEqualTo(State.OPEN);
	}

	@Test
	void probeAnsweredWithNoTextIsASuccessThoughAUsersCallWouldBeAnEmptyResponse() {
		LlmEndpoint endpoint = endpoint(true);
		// with a max-tokens of 1 a provider may well answer with nothing but its finish reason
		this.answers.add(Flux.just(text(""), finished("stop")));
		halfOpen(endpoint);
		this.time.advanceTime();
		assertThat(endpoint.probes().lastOutcome()).isEqualTo(Outcome.SUCCESS);
		assertThat(endpoint.circuitBreaker().getState()).isEqualTo(State.CLOSED);
		this.answers.add(Flux.just(text(""), finished("stop")));
		List<Outcome> outcomes = new CopyOnWriteArrayList<>();
		endpoint.chat(ChatRequest.ofUser("hello"), (attempt) -> outcomes.add(attempt.outcome()))
			.onErrorResume((error) -> Mono.empty())
			.block(Duration.ofSeconds(5));
		assertThat(outcomes).containsExactly(Outcome.EMPTY_RESPONSE);
	}

	@Test
	void disabledEndpointIsNotProbed() {
		LlmEndpoint endpoint = endpoint(false);
		halfOpen(endpoint);
		this.time.advanceTimeBy(Duration.ofSeconds(5));
		assertThat(this.client.calls()).isZero();
		assertThat(endpoint.circuitBreaker().getState()).isEqualTo(State.HALF_OPEN);
	}

	private Disposable holdTheBulkhead(LlmEndpoint endpoint) {
		this.answers.add(Flux.just(text("long")).concatWith(Flux.never()));
		Disposable held = endpoint.stream(ChatRequest.ofUser("hold"), (attempt) -> {
		}).subscribe();
		assertThat(endpoint.bulkhead().getMetrics().getAvailableConcurrentCalls()).isZero();
		return held;
	}

	private static void halfOpen(LlmEndpoint endpoint) {
		CircuitBreaker breaker = endpoint.circuitBreaker();
		if (breaker.getState() != State.OPEN) {
			breaker.transitionToOpenState();
		}
		breaker.transitionToHalfOpenState();
	}

	private LlmEndpoint endpoint(boolean enabled) {
		EndpointSettings settings = EndpointSettings.builder("probed", URI.create("http://127.0.0.1:9/v1"), "probed-model")
			.routing(new EndpointSettings.Routing(0, null, enabled, null))
			.timeouts(new EndpointSettings.Timeouts(Duration.ofSeconds(60), Duration.ofSeconds(5), Duration.ofSeconds(30),
					Duration.ofSeconds(30), true))
			.limits(Limits.DEFAULT.withMaxResponseSize(1 << 20))
			.circuitBreaker(new EndpointSettings.CircuitBreakerSettings(20, 20, 50f, Duration.ofMinutes(10), 1,
					Duration.ofSeconds(60), 100f, EndpointSettings.Probe.SYNTHETIC))
			.retry(TestEndpoints.retry(1))
			.bulkhead(new EndpointSettings.BulkheadSettings(1, Duration.ZERO))
			.build();
		return this.endpoints.factory().create(settings, this.client);
	}

}
