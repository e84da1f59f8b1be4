package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.TestEndpoints.FakeClient;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.CompletionDelta;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;

import static dev.llmresilience.engine.TestEndpoints.counted;
import static dev.llmresilience.engine.TestEndpoints.finished;
import static dev.llmresilience.engine.TestEndpoints.text;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * How long a {@link LlmGateway#stream} may take, under virtual time with an in-process client: the
 * gateway's deadline bounds the wait for the first chunk only, a request's deadline the whole stream.
 */
class StreamingDeadlineTests {

	@Test
	void theGatewayDeadlineBoundsOnlyTheWaitForTheFirstChunk() {
		FakeClient client = new FakeClient(() -> Flux.interval(Duration.ofSeconds(10)).take(20).map((i) -> text("x")));
		DefaultLlmGateway gateway = gateway(client, Duration.ofSeconds(90));
		StepVerifier.withVirtualTime(() -> gateway.stream(ChatRequest.ofUser("Long answer")))
			.thenAwait(Duration.ofSeconds(200))
			.expectNextCount(20)
			.verifyComplete();
	}

	@Test
	void noFirstChunkWithinTheGatewayDeadlineIsBusyAndRecordsNothing() {
		AtomicBoolean cancelled = new AtomicBoolean();
		FakeClient client = new FakeClient(() -> Flux.<CompletionDelta>never()
			.doOnCancel(() -> cancelled.set(true)));
		List<LlmEndpoint> endpoints = new ArrayList<>();
		DefaultLlmGateway gateway = gateway(client, Duration.ofSeconds(5), endpoints);
		StepVerifier.withVirtualTime(() -> gateway.stream(ChatRequest.ofUser("Hi")))
			.expectSubscription()
			.expectNoEvent(Duration.ofSeconds(5))
			.expectNextMatches((chunk) -> chunk.tier() == Tier.BUSY)
			.verifyComplete();
		assertThat(cancelled).isTrue();
		assertThat(endpoints.get(0).circuitBreaker().getMetrics().getNumberOfBufferedCalls()).isZero();
		assertThat(endpoints.get(0).bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(5);
	}

	@Test
	void aRequestDeadlineBoundsTheWholeStream() {
		FakeClient client = new FakeClient(() -> Flux.interval(Duration.ofSeconds(10)).take(20).map((i) -> text("x")));
		DefaultLlmGateway gateway = gateway(client, Duration.ofSeconds(90));
		StepVerifier.withVirtualTime(() -> gateway.stream(ChatRequest.builder().user("Hi").deadline(Duration.ofSeconds(65)).build()))
			.thenAwait(Duration.ofSeconds(65))
			.expectNextCount(6)
			.expectErrorSatisfies((error) -> {
				LlmStreamInterruptedException interrupted = (LlmStreamInterruptedException) error;
				assertThat(interrupted.partial()).isEqualTo("xxxxxx");
				assertThat(interrupted.getMessage()).contains("deadline of PT1M5S");
			})
			.verify(Duration.ofSeconds(5));
	}

	@Test
	void aSteadyStreamOfFiveMinutesThroughTheGatewayIsOneSuccess() {
		FakeClient client = new FakeClient(() -> Flux.interval(Duration.ofSeconds(10))
			.take(30)
			.map((i) -> text("x"))
			.concatWith(Flux.just(finished("stop"), counted(4, 30))));
		List<LlmEndpoint> endpoints = new ArrayList<>();
		DefaultLlmGateway gateway = gateway(client, Duration.ofSeconds(90), endpoints);
		StepVerifier.withVirtualTime(() -> gateway.stream(ChatRequest.ofUser("Long answer")))
			.thenAwait(Duration.ofMinutes(5))
			.expectNextCount(30)
			.expectNextMatches((last) -> "stop".equals(last.finishReason()) && last.tier() == Tier.PRIMARY)
			.verifyComplete();
		assertThat(endpoints.get(0).circuitBreaker().getMetrics().getNumberOfSuccessfulCalls()).isEqualTo(1);
		assertThat(endpoints.get(0).circuitBreaker().getMetrics().getNumberOfSlowCalls()).isZero();
	}

	private static DefaultLlmGateway gateway(FakeClient client, Duration deadline) {
		return gateway(client, deadline, new ArrayList<>());
	}

	private static DefaultLlmGateway gateway(FakeClient client, Duration deadline, List<LlmEndpoint> created) {
		LlmEndpoint endpoint = TestEndpoints.endpoint(TestEndpoints.settings("primary", "http://localhost:1/v1",
				Duration.ofSeconds(30), Duration.ofSeconds(30), 1, 5), client);
		created.add(endpoint);
		EndpointRegistry registry = new EndpointRegistry(List.of(endpoint), Map.of("default", List.of("primary")),
				List.of());
		return new DefaultLlmGateway(registry, new GatewaySettings(deadline, "busy", "filtered", false, "queued", false));
	}

}
