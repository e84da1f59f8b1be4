package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream.Gate;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static dev.llmresilience.engine.TestEndpoints.DEFAULT_BREAKER;
import static dev.llmresilience.engine.TestEndpoints.call;
import static dev.llmresilience.engine.TestEndpoints.retry;
import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An endpoint's circuit breaker with the documented defaults (window 20, minimum 20, 50 %, 30 s
 * open, 3 probes) over real HTTP, its time moved by an injected clock instead of sleeping. One
 * attempt per call, so that every call is one breaker call.
 */
class CircuitBreakerLifecycleTests {

	private final MockWebServer server = new MockWebServer();

	private final TestEndpoints endpoints = new TestEndpoints(() -> 0.5);

	private LlmEndpoint endpoint;

	@BeforeEach
	void start() throws Exception {
		this.server.start();
		this.endpoint = this.endpoints.create(this.server, DEFAULT_BREAKER, retry(1));
	}

	@AfterEach
	void stop() {
		this.endpoints.close();
		this.server.close();
	}

	@Test
	void breakerOpensWhenHalfOfTwentyCallsFail() {
		enqueue(10, 10);
		for (int i = 0; i < 19; i++) {
			call(this.endpoint);
		}
		assertThat(state()).isEqualTo(State.CLOSED);
		assertThat(this.endpoint.circuitBreaker().getMetrics().getFailureRate()).isEqualTo(-1f);
		assertThat(call(this.endpoint)).containsExactly(Outcome.SERVER_ERROR);
		assertThat(state()).isEqualTo(State.OPEN);
		assertThat(this.endpoint.circuitBreaker().getMetrics().getFailureRate()).isEqualTo(50f);
		assertThat(BreakerCalls.of(this.endpoint.circuitBreaker())).isEqualTo(new BreakerCalls(20, 10, 10));
	}

	@Test
	void breakerStaysClosedWhenFewerThanHalfOfTwentyCallsFail() {
		enqueue(11, 9);
		for (int i = 0; i < 20; i++) {
			call(this.endpoint);
		}
		assertThat(state()).isEqualTo(State.CLOSED);
		assertThat(this.endpoint.circuitBreaker().getMetrics().getFailureRate()).isEqualTo(45f);
	}

	@Test
	void openBreakerRejectsCallsWithoutCallingTheServer() {
		open();
		for (int i = 0; i < 5; i++) {
			assertThat(call(this.endpoint)).containsExactly(Outcome.BREAKER_OPEN);
		}
		assertThat(this.server.getRequestCount()).isEqualTo(20);
		assertThat(this.endpoint.circuitBreaker().getMetrics().getNumberOfNotPermittedCalls()).isEqualTo(5);
	}

	@Test
	void breakerLetsAProbeThroughOnceTheWaitInOpenStateHasPassed() {
		open();
		this.endpoints.clock().advance(Duration.ofSeconds(29));
		assertThat(call(this.endpoint)).containsExactly(Outcome.BREAKER_OPEN);
		assertThat(this.server.getRequestCount()).isEqualTo(20);
		this.endpoints.clock().advance(Duration.ofSeconds(1).plusMillis(1));
		this.server.enqueue(completion("probe"));
		assertThat(call(this.endpoint)).containsExactly(Outcome.SUCCESS);
		assertThat(state()).isEqualTo(State.HALF_OPEN);
		assertThat(this.server.getRequestCount()).isEqualTo(21);
	}

	@Test
	void twoSuccessfulProbesOfThreeCloseTheBreaker() {
		openAndWait();
		this.server.enqueue(completion("one"));
		this.server.enqueue(error(500, "server_error"));
		this.server.enqueue(completion("two"));
		assertThat(List.of(call(this.endpoint), call(this.endpoint), call(this.endpoint))).containsExactly(
				List.of(Outcome.SUCCESS), List.of(Outcome.SERVER_ERROR), List.of(Outcome.SUCCESS));
		assertThat(state()).isEqualTo(State.CLOSED);
		assertThat(this.server.getRequestCount()).isEqualTo(23);
		this.server.enqueue(completion("closed again"));
		assertThat(call(this.endpoint)).containsExactly(Outcome.SUCCESS);
	}

	@Test
	void twoFailedProbesOfThreeOpenTheBreakerAgain() {
		openAndWait();
		this.server.enqueue(error(503, "overloaded"));
		this.server.enqueue(completion("one"));
		this.server.enqueue(error(503, "overloaded"));
		assertThat(List.of(call(this.endpoint), call(this.endpoint), call(this.endpoint))).containsExactly(
				List.of(Outcome.SERVER_ERROR), List.of(Outcome.SUCCESS), List.of(Outcome.SERVER_ERROR));
		assertThat(state()).isEqualTo(State.OPEN);
		assertThat(call(this.endpoint)).containsExactly(Outcome.BREAKER_OPEN);
		assertThat(this.server.getRequestCount()).isEqualTo(23);
	}

	@Test
	void callsBeyondTheThreeProbesAreRejectedWithoutCallingTheServer() throws Exception {
		this.endpoint.circuitBreaker().transitionToOpenState();
		this.endpoints.clock().advance(Duration.ofSeconds(31));
		Gate gate = new Gate(completion("probe"));
		this.server.setDispatcher(gate);
		List<Attempt> probes = new CopyOnWriteArrayList<>();
		List<CompletableFuture<?>> inFlight = List.of(probe(probes), probe(probes), probe(probes));
		for (int i = 0; i < 3; i++) {
			assertThat(this.server.takeRequest(10, TimeUnit.SECONDS)).isNotNull();
		}
		assertThat(state()).isEqualTo(State.HALF_OPEN);
		assertThat(call(this.endpoint)).containsExactly(Outcome.BREAKER_OPEN);
		assertThat(this.server.getRequestCount()).isEqualTo(3);
		gate.open();
		CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).get(10, TimeUnit.SECONDS);
		assertThat(probes).extracting(Attempt::outcome).containsOnly(Outcome.SUCCESS).hasSize(3);
		assertThat(state()).isEqualTo(State.CLOSED);
	}

	private CompletableFuture<?> probe(List<Attempt> attempts) {
		return this.endpoint.chat(ChatRequest.ofUser("probe"), attempts::add).toFuture();
	}

	private void open() {
		enqueue(10, 10);
		for (int i = 0; i < 20; i++) {
			call(this.endpoint);
		}
		assertThat(state()).isEqualTo(State.OPEN);
	}

	private void openAndWait() {
		open();
		this.endpoints.clock().advance(Duration.ofSeconds(31));
	}

	private void enqueue(int successes, int failures) {
		for (int i = 0; i < successes; i++) {
			this.server.enqueue(completion("fine"));
		}
		for (int i = 0; i < failures; i++) {
			this.server.enqueue(error(500, "server_error"));
		}
	}

	private State state() {
		return this.endpoint.circuitBreaker().getState();
	}

}
