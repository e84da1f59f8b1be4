package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.Answers.Ending;
import dev.llmresilience.support.FakeUpstream;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;

import static dev.llmresilience.support.Answers.content;
import static dev.llmresilience.support.Answers.role;
import static dev.llmresilience.support.Answers.sse;
import static dev.llmresilience.support.Answers.streamFixture;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LlmGateway#stream} over real HTTP through the auto-configuration: two {@link FakeUpstream}
 * servers, {@code primary} and {@code backup}, replaying, cutting and stalling streams.
 */
class StreamingGatewayTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	private static final String BASIC_TEXT = "I'm unable to provide real-time weather updates. To get the current "
			+ "weather in San Francisco, I recommend checking a reliable weather website or a weather app.";

	private FakeUpstream upstreams;

	private final CountDownLatch release = new CountDownLatch(1);

	private ApplicationContextRunner runner;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
		this.runner = this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.model=m1", "llm.endpoints.primary.api-key=sk-test-123456789",
					"llm.endpoints.backup.model=m2", "llm.defaults.first-token-timeout=2s",
					"llm.defaults.stream-idle-timeout=2s");
	}

	@AfterEach
	void stop() {
		this.release.countDown();
		this.upstreams.close();
	}

	@Test
	void streamsTheAnswerFromThePrimaryWithFinishReasonAndUsageOnTheLastChunkOnly() {
		this.upstreams.primary().enqueue(sse(streamFixture("pysdk-stream-basic-stop-usage.sse")));
		run((context) -> {
			List<ChatChunk> chunks = gateway(context).stream(ChatRequest.ofUser("Weather?")).collectList().block(WAIT);
			assertThat(joined(chunks)).isEqualTo(BASIC_TEXT);
			assertThat(chunks).allSatisfy((chunk) -> {
				assertThat(chunk.endpoint()).isEqualTo("primary");
				assertThat(chunk.tier()).isEqualTo(Tier.PRIMARY);
			});
			ChatChunk last = chunks.get(chunks.size() - 1);
			assertThat(last.finishReason()).isEqualTo("stop");
			assertThat(last.usage()).isEqualTo(new Usage(14, 30));
			assertThat(chunks.subList(0, chunks.size() - 1))
				.allSatisfy((chunk) -> assertThat(chunk.finishReason() == null && chunk.usage() == null).isTrue());
			assertThat(breaker(context, "primary").getNumberOfSuccessfulCalls()).isEqualTo(1);
		});
	}

	@Test
	void aToolCallStreamIsRelayedAsToolCallDeltas() {
		this.upstreams.primary().enqueue(sse(streamFixture("pysdk-stream-tool-call-nonstrict.sse")));
		run((context) -> {
			List<ChatChunk> chunks = gateway(context).stream(ChatRequest.ofUser("Weather in NYC?")).collectList().block(WAIT);
			List<ToolCallDelta> pieces = chunks.stream().flatMap((chunk) -> chunk.toolCalls().stream()).toList();
			assertThat(pieces.get(0).name()).isEqualTo("get_weather");
			assertThat(pieces.get(0).id()).isEqualTo("call_4XzlGBLtUe9dy3GVNV4jhq7h");
			assertThat(pieces.stream().map(ToolCallDelta::arguments).collect(Collectors.joining()))
				.isEqualTo("{\"city\":\"New York City\"}");
			assertThat(chunks.get(chunks.size() - 1).finishReason()).isEqualTo("tool_calls");
		});
	}

	@Test
	void anErrorStatusBeforeTheFirstChunkIsRetriedThenFallsBackUnseen() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(new MockResponse.Builder().code(500).body("{\"error\":{\"message\":\"boom\"}}").build());
		}
		this.upstreams.backup().enqueue(sse(Answers.stream("From", " backup")));
		run((context) -> {
			List<ChatChunk> chunks = gateway(context).stream(ChatRequest.ofUser("Hi")).collectList().block(WAIT);
			assertThat(joined(chunks)).isEqualTo("From backup");
			assertThat(chunks).allSatisfy((chunk) -> {
				assertThat(chunk.endpoint()).isEqualTo("backup");
				assertThat(chunk.tier()).isEqualTo(Tier.FALLBACK);
			});
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
		});
	}

	@Test
	void aCutBeforeTheFirstChunkIsRetriedThenFallsBackUnseen() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(sse(Ending.CUT, this.release, role()));
		}
		this.upstreams.backup().enqueue(sse(Answers.stream("Still", " here")));
		run((context) -> {
			List<ChatChunk> chunks = gateway(context).stream(ChatRequest.ofUser("Hi")).collectList().block(WAIT);
			assertThat(joined(chunks)).isEqualTo("Still here");
			assertThat(chunks).extracting(ChatChunk::endpoint).containsOnly("backup");
			assertThat(breaker(context, "primary").getNumberOfFailedCalls()).isEqualTo(3);
		});
	}

	@Test
	void aStallBeforeTheFirstChunkHitsTheFirstTokenTimeoutAndFallsBack() {
		this.upstreams.primary().enqueue(sse(Ending.STALL, this.release, role()));
		this.upstreams.backup().enqueue(sse(Answers.stream("Quick")));
		this.runner.withPropertyValues("llm.endpoints.primary.first-token-timeout=300ms",
				"llm.endpoints.primary.retry.max-attempts=1").run((context) -> {
					List<ChatChunk> chunks = gateway(context).stream(ChatRequest.ofUser("Hi")).collectList().block(WAIT);
					assertThat(joined(chunks)).isEqualTo("Quick");
					assertThat(chunks).extracting(ChatChunk::tier).containsOnly(Tier.FALLBACK);
					assertThat(breaker(context, "primary").getNumberOfFailedCalls()).isEqualTo(1);
				});
	}

	@Test
	void aCutAfterTheFirstChunkEndsWithTheTypedErrorCarryingThePartialTextAndIsNotRestarted() {
		this.upstreams.primary().enqueue(sse(Ending.CUT, this.release, role(), content("The answer"), content(" is")));
		run((context) -> {
			StepVerifier.create(gateway(context).stream(ChatRequest.ofUser("Question?")))
				.expectNextMatches((chunk) -> chunk.content().equals("The answer") && chunk.tier() == Tier.PRIMARY)
				.expectNextMatches((chunk) -> chunk.content().equals(" is"))
				.expectErrorSatisfies((error) -> {
					assertThat(error).isInstanceOf(LlmStreamInterruptedException.class);
					LlmStreamInterruptedException interrupted = (LlmStreamInterruptedException) error;
					assertThat(interrupted.outcome()).isEqualTo(Outcome.STREAM_INTERRUPTED);
					assertThat(interrupted.partial()).isEqualTo("The answer is");
					assertThat(interrupted.endpoint()).isEqualTo("primary");
				})
				.verify(WAIT);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(1);
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
			assertThat(breaker(context, "primary").getNumberOfFailedCalls()).isEqualTo(1);
		});
	}

	@Test
	void aStallAfterTheFirstChunkEndsWithTheTypedErrorAfterTheIdleTimeout() {
		this.upstreams.primary().enqueue(sse(Ending.STALL, this.release, role(), content("Once"), content(" upon")));
		this.runner.withPropertyValues("llm.defaults.stream-idle-timeout=300ms").run((context) -> {
			StepVerifier.create(gateway(context).stream(ChatRequest.ofUser("A story")))
				.expectNextCount(2)
				.expectErrorSatisfies((error) -> {
					LlmStreamInterruptedException stalled = (LlmStreamInterruptedException) error;
					assertThat(stalled.outcome()).isEqualTo(Outcome.STREAM_STALLED);
					assertThat(stalled.partial()).isEqualTo("Once upon");
					assertThat(stalled.endpoint()).isEqualTo("primary");
				})
				.verify(WAIT);
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
		});
	}

	@Test
	void withResumeOnFallbackACutStreamContinuesOnTheNextEndpointFromThePartialAnswer() throws Exception {
		this.upstreams.primary().enqueue(sse(Ending.CUT, this.release, role(), content("The answer"), content(" is")));
		this.upstreams.backup().enqueue(sse(Answers.stream(" forty", "-two.")));
		this.runner.withPropertyValues("llm.gateway.stream.resume-on-fallback=true").run((context) -> {
			StepVerifier.create(gateway(context).stream(ChatRequest.ofUser("Question?")))
				.expectNextMatches((chunk) -> chunk.content().equals("The answer") && chunk.tier() == Tier.PRIMARY)
				.expectNextMatches((chunk) -> chunk.content().equals(" is") && chunk.endpoint().equals("primary"))
				.expectNextMatches((chunk) -> chunk.content().equals(" forty") && chunk.tier() == Tier.FALLBACK
						&& chunk.endpoint().equals("backup"))
				.expectNextMatches((chunk) -> chunk.content().equals("-two."))
				.expectNextMatches((chunk) -> "stop".equals(chunk.finishReason()) && chunk.usage() != null
						&& chunk.tier() == Tier.FALLBACK)
				.verifyComplete();
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(1);
		});
		RecordedRequest continuation = this.upstreams.backup().takeRequest();
		assertThat(continuation.getBody().utf8()).contains(
				"\"messages\":[{\"role\":\"user\",\"content\":\"Question?\"},{\"role\":\"assistant\",\"content\":\"The answer is\"}]");
	}

	@Test
	void withResumeOnFallbackAStalledStreamContinuesOnTheNextEndpoint() throws Exception {
		this.upstreams.primary().enqueue(sse(Ending.STALL, this.release, role(), content("Once"), content(" upon")));
		this.upstreams.backup().enqueue(sse(Answers.stream(" a time.")));
		this.runner.withPropertyValues("llm.gateway.stream.resume-on-fallback=true",
				"llm.defaults.stream-idle-timeout=300ms").run((context) -> {
					List<ChatChunk> chunks = gateway(context).stream(ChatRequest.ofUser("A story")).collectList().block(WAIT);
					assertThat(joined(chunks)).isEqualTo("Once upon a time.");
					assertThat(chunks).extracting(ChatChunk::endpoint).containsExactly("primary", "primary", "backup", "backup");
					assertThat(breaker(context, "primary").getNumberOfFailedCalls()).isEqualTo(1);
				});
		assertThat(this.upstreams.backup().takeRequest().getBody().utf8()).contains("{\"role\":\"assistant\",\"content\":\"Once upon\"}");
	}

	@Test
	void withResumeOnFallbackTheTypedErrorCarriesThePartialTextWhenNoEndpointCanContinue() {
		this.upstreams.primary().enqueue(sse(Ending.CUT, this.release, role(), content("Hal")));
		for (int i = 0; i < 3; i++) {
			this.upstreams.backup().enqueue(new MockResponse.Builder().code(503).body("{}").build());
		}
		this.runner.withPropertyValues("llm.gateway.stream.resume-on-fallback=true").run((context) -> {
			StepVerifier.create(gateway(context).stream(ChatRequest.ofUser("Hi")))
				.expectNextCount(1)
				.expectErrorSatisfies((error) -> {
					LlmStreamInterruptedException interrupted = (LlmStreamInterruptedException) error;
					assertThat(interrupted.partial()).isEqualTo("Hal");
					assertThat(interrupted.endpoint()).isEqualTo("primary");
				})
				.verify(WAIT);
			assertThat(this.upstreams.backup().getRequestCount()).isEqualTo(3);
		});
	}

	@Test
	void whenEveryEndpointFailsBeforeTheFirstChunkTheStreamIsOneBusyChunk() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(new MockResponse.Builder().code(500).body("{}").build());
			this.upstreams.backup().enqueue(new MockResponse.Builder().code(503).body("{}").build());
		}
		run((context) -> StepVerifier.create(gateway(context).stream(ChatRequest.ofUser("Hi")))
			.expectNext(new ChatChunk("The service is busy right now. Please try again in a minute.", null, Tier.BUSY,
					null, null, List.of()))
			.verifyComplete());
	}

	@Test
	void anInvalidRequestIsTheCallersErrorAndDoesNotFallBack() {
		this.upstreams.primary().enqueue(new MockResponse.Builder().code(400)
			.body("{\"error\":{\"message\":\"Bad temperature\",\"type\":\"invalid_request_error\"}}")
			.build());
		run((context) -> {
			StepVerifier.create(gateway(context).stream(ChatRequest.ofUser("Hi")))
				.expectError(LlmInvalidRequestException.class)
				.verify(WAIT);
			StepVerifier.create(gateway(context).stream(ChatRequest.builder().user("Hi").route("nope").build()))
				.expectErrorMessage("Unknown route 'nope': configure it under llm.routes or use one of [default]")
				.verify(WAIT);
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
		});
	}

	@Test
	void aCancelMidStreamOverHttpRecordsNothingAndFreesTheBulkhead() {
		this.upstreams.primary().enqueue(sse(Ending.STALL, this.release, role(), content("a"), content("b")));
		run((context) -> {
			StepVerifier.create(gateway(context).stream(ChatRequest.ofUser("Hi")))
				.expectNextCount(2)
				.thenCancel()
				.verify(WAIT);
			LlmEndpoint primary = context.getBean(EndpointRegistry.class).endpoint("primary");
			assertThat(primary.circuitBreaker().getMetrics().getNumberOfBufferedCalls()).isZero();
			assertThat(primary.bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(50);
		});
	}

	private void run(ContextConsumer<AssertableApplicationContext> test) {
		this.runner.run(test);
	}

	private static LlmGateway gateway(AssertableApplicationContext context) {
		return context.getBean(LlmGateway.class);
	}

	private static CircuitBreaker.Metrics breaker(AssertableApplicationContext context, String name) {
		return context.getBean(EndpointRegistry.class).endpoint(name).circuitBreaker().getMetrics();
	}

	private static String joined(List<ChatChunk> chunks) {
		return chunks.stream().map(ChatChunk::content).collect(Collectors.joining());
	}

}
