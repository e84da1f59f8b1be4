package dev.llmresilience.engine;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings.Limits;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import static dev.llmresilience.engine.TestEndpoints.retry;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A half-open breaker lets through its permitted probes and no more, whatever happens to calls that
 * were let through before it half-opened. Resilience4j hands a permit back to whatever state the
 * breaker is in when a call is cancelled or ends with an ignored outcome; without care, a call that
 * started while CLOSED and ended while HALF_OPEN would add a probe. Found by the concurrency hammer
 * ({@code ConcurrencyHammerTests}); here step by step, with calls held open by hand.
 */
class HalfOpenProbeTests {

	private static final EndpointSettings.CircuitBreakerSettings ONE_PROBE = new EndpointSettings.CircuitBreakerSettings(
			20, 20, 50f, Duration.ofSeconds(30), 1, Duration.ofSeconds(60), 100f);

	private final HeldCalls upstream = new HeldCalls();

	private final TestEndpoints endpoints = new TestEndpoints(() -> 0.5);

	private LlmEndpoint endpoint;

	@BeforeEach
	void create() {
		this.endpoint = endpoint(false);
	}

	private LlmEndpoint endpoint(boolean upstreamStreaming) {
		EndpointSettings settings = EndpointSettings.builder("held", URI.create("http://127.0.0.1:9/v1"), "held-model")
			.timeouts(new EndpointSettings.Timeouts(Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30),
					Duration.ofSeconds(30), upstreamStreaming))
			.limits(Limits.DEFAULT.withMaxResponseSize(1 << 20))
			.circuitBreaker(ONE_PROBE)
			.retry(retry(1))
			.build();
		return this.endpoints.factory().create(settings, this.upstream);
	}

	@Test
	void callLetThroughWhileClosedAndCancelledWhileHalfOpenAddsNoProbe() {
		Disposable early = call();
		halfOpen();
		early.dispose();
		assertThat(this.upstream.cancelled).isEqualTo(1);

		Disposable probe = call();
		List<Outcome> refused = new CopyOnWriteArrayList<>();
		Disposable second = call(refused);
		assertThat(this.upstream.calls).as("upstream calls: the early one and one probe").hasSize(2);
		assertThat(refused).containsExactly(Outcome.BREAKER_OPEN);
		probe.dispose();
		second.dispose();
	}

	@Test
	void callLetThroughWhileClosedThatEndsIgnoredWhileHalfOpenAddsNoProbe() {
		// it has begun to answer before the breaker opens: only a call still waiting for its first
		// token is released when the breaker opens, so this one lives on into the half-open state
		List<Outcome> early = new CopyOnWriteArrayList<>();
		stream(early);
		this.upstream.streams.get(0).tryEmitNext(new CompletionDelta("Once", List.of(), null, null, null));
		halfOpen();
		this.upstream.streams.get(0).tryEmitNext(new CompletionDelta("", List.of(), "content_filter", null, null));
		this.upstream.streams.get(0).tryEmitComplete();
		assertThat(early).containsExactly(Outcome.CONTENT_FILTERED);

		Disposable probe = call();
		List<Outcome> refused = new CopyOnWriteArrayList<>();
		Disposable second = call(refused);
		assertThat(this.upstream.calls).as("upstream calls after the early one: one probe").hasSize(1);
		assertThat(refused).containsExactly(Outcome.BREAKER_OPEN);
		probe.dispose();
		second.dispose();
	}

	@Test
	void chatLetThroughWhileClosedThatFailsWithAnIgnoredErrorWhileHalfOpenAddsNoProbe() {
		// a chat read upstream as a stream has begun to answer, so the breaker's opening does not
		// release it; the ignored error it then ends with must not give its permit to the half-open state
		this.endpoint = endpoint(true);
		List<Outcome> early = new CopyOnWriteArrayList<>();
		call(early);
		this.upstream.streams.get(0).tryEmitNext(new CompletionDelta("Once", List.of(), null, null, null));
		halfOpen();
		this.upstream.streams.get(0).tryEmitError(new LlmUpstreamException("held", Outcome.CONTENT_FILTERED, 200, null,
				"The provider's content filter blocked the answer", null));
		assertThat(early).containsExactly(Outcome.CONTENT_FILTERED);

		List<Outcome> probe = new CopyOnWriteArrayList<>();
		Disposable first = call(probe);
		List<Outcome> refused = new CopyOnWriteArrayList<>();
		Disposable second = call(refused);
		assertThat(this.upstream.streams).as("upstream calls: the early one and one probe").hasSize(2);
		assertThat(refused).containsExactly(Outcome.BREAKER_OPEN);
		first.dispose();
		second.dispose();
	}

	@Test
	void probeCancelledWhileHalfOpenStillGivesItsPermitBack() {
		halfOpen();
		call().dispose();
		List<Outcome> next = new CopyOnWriteArrayList<>();
		Disposable probe = call(next);
		assertThat(this.upstream.calls).as("upstream calls: the cancelled probe and the next").hasSize(2);
		assertThat(next).isEmpty();
		probe.dispose();
	}

	@Test
	void probeEndingIgnoredWhileHalfOpenStillGivesItsPermitBack() {
		halfOpen();
		List<Outcome> first = new CopyOnWriteArrayList<>();
		call(first);
		this.upstream.calls.get(0).tryEmitError(new LlmUpstreamException("held", Outcome.CONTENT_FILTERED, 200, null,
				"The provider's content filter blocked the answer", null));
		assertThat(first).containsExactly(Outcome.CONTENT_FILTERED);
		List<Outcome> next = new CopyOnWriteArrayList<>();
		call(next);
		assertThat(this.upstream.calls).hasSize(2);
		this.upstream.calls.get(1).tryEmitValue(new Completion("ok", null, "stop", List.of(), null));
		assertThat(next).containsExactly(Outcome.SUCCESS);
		assertThat(state()).isEqualTo(State.CLOSED);
	}

	@Test
	void streamLetThroughWhileClosedAndCancelledWhileHalfOpenAddsNoProbe() {
		Disposable early = stream(new CopyOnWriteArrayList<>());
		halfOpen();
		early.dispose();
		assertThat(this.upstream.streams).hasSize(1);

		Disposable probe = stream(new CopyOnWriteArrayList<>());
		List<Outcome> refused = new CopyOnWriteArrayList<>();
		Disposable second = stream(refused);
		assertThat(this.upstream.streams).as("upstream streams: the early one and one probe").hasSize(2);
		assertThat(refused).containsExactly(Outcome.BREAKER_OPEN);
		probe.dispose();
		second.dispose();
	}

	@Test
	void streamProbeCancelledWhileHalfOpenStillGivesItsPermitBack() {
		halfOpen();
		stream(new CopyOnWriteArrayList<>()).dispose();
		List<Outcome> next = new CopyOnWriteArrayList<>();
		Disposable probe = stream(next);
		assertThat(this.upstream.streams).as("upstream streams: the cancelled probe and the next").hasSize(2);
		assertThat(next).isEmpty();
		probe.dispose();
	}

	private Disposable stream(List<Outcome> outcomes) {
		return this.endpoint.stream(ChatRequest.ofUser("hello"), (Attempt attempt) -> outcomes.add(attempt.outcome()))
			.subscribe((delta) -> {
			}, (error) -> {
			});
	}

	private void halfOpen() {
		CircuitBreaker breaker = this.endpoint.circuitBreaker();
		breaker.transitionToOpenState();
		breaker.transitionToHalfOpenState();
		assertThat(state()).isEqualTo(State.HALF_OPEN);
	}

	private State state() {
		return this.endpoint.circuitBreaker().getState();
	}

	private Disposable call() {
		return call(new CopyOnWriteArrayList<>());
	}

	private Disposable call(List<Outcome> outcomes) {
		return this.endpoint.chat(ChatRequest.ofUser("hello"), (Attempt attempt) -> outcomes.add(attempt.outcome()))
			.subscribe((completion) -> {
			}, (error) -> {
			});
	}

	/** An upstream whose every call waits until the test ends it. */
	private static final class HeldCalls implements LlmClient {

		final List<Sinks.One<Completion>> calls = new CopyOnWriteArrayList<>();

		final List<Sinks.Many<CompletionDelta>> streams = new CopyOnWriteArrayList<>();

		@Override
		public Flux<CompletionDelta> stream(ChatRequest request) {
			return Flux.defer(() -> {
				Sinks.Many<CompletionDelta> stream = Sinks.many().unicast().onBackpressureBuffer();
				this.streams.add(stream);
				return stream.asFlux();
			});
		}

		volatile int cancelled;

		@Override
		public Mono<Completion> chat(ChatRequest request) {
			return Mono.defer(() -> {
				Sinks.One<Completion> call = Sinks.one();
				this.calls.add(call);
				return call.asMono().doOnCancel(() -> this.cancelled++);
			});
		}

	}

}
