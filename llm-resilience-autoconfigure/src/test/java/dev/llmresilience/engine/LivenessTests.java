package dev.llmresilience.engine;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.FakeUpstream.Gate;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import okio.BufferedSink;
import okio.Okio;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static dev.llmresilience.support.Answers.answering;
import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.sse;
import static dev.llmresilience.support.Answers.streamFixture;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A hanging model is left in seconds (docs/liveness.md): chat goes upstream as a stream
 * and is assembled, so its first token bounds it; a first-token timeout is a breaker failure, not
 * retried while a later endpoint is available; an opening breaker releases the calls waiting for
 * their first token; a long, steady answer trips nothing. Over real local HTTP; time is virtual
 * where a wait would otherwise be real.
 */
class LivenessTests {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private static final Duration VERIFY = Duration.ofSeconds(15);

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		VirtualTimeScheduler.reset();
		this.upstreams.close();
	}

	@Test
	void chatGoesUpstreamAsAStreamAndIsAssembledIntoOneAnswer() throws Exception {
		String recorded = streamFixture("pysdk-stream-basic-stop-usage.sse");
		this.upstreams.primary().enqueue(sse(recorded));
		this.upstreams.runner().run((context) -> {
			ChatResponse answer = FakeUpstream.chat(context);
			assertThat(answer.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(answer.content()).isEqualTo(textOf(recorded)).startsWith("I'm unable to provide real-time weather");
			assertThat(answer.finishReason()).isEqualTo("stop");
			assertThat(answer.usage().promptTokens()).isEqualTo(14);
			assertThat(answer.usage().completionTokens()).isEqualTo(30);
			assertThat(answer.model()).isEqualTo("gpt-4o-2024-08-06");
			assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
		});
		JsonNode sent = mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8());
		assertThat(sent.get("stream").asBoolean()).isTrue();
		assertThat(sent.get("stream_options").get("include_usage").asBoolean()).isTrue();
	}

	@Test
	void toolCallsStreamedUpstreamAreAssembledIntoTheChatAnswer() {
		this.upstreams.primary().enqueue(sse(streamFixture("pysdk-stream-parallel-tool-calls.sse")));
		this.upstreams.runner().run((context) -> {
			ChatResponse answer = FakeUpstream.chat(context);
			assertThat(answer.finishReason()).isEqualTo("tool_calls");
			assertThat(answer.toolCalls()).extracting(ToolCall::name).containsExactly("GetWeatherArgs", "get_stock_price");
			assertThat(answer.toolCalls()).extracting(ToolCall::id).allSatisfy((id) -> assertThat(id).startsWith("call_"));
			for (ToolCall call : answer.toolCalls()) {
				assertThat(mapper.readTree(call.arguments()).isObject()).as(call.arguments()).isTrue();
			}
			assertThat(answer.usage().completionTokens()).isEqualTo(60);
		});
	}

	@Test
	void plainJsonAnswerToAStreamedRequestIsAcceptedAsItIs() throws Exception {
		this.upstreams.primary().enqueue(completion("a plain answer"));
		this.upstreams.runner().run((context) -> {
			ChatResponse answer = FakeUpstream.chat(context);
			assertThat(answer.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(answer.content()).isEqualTo("a plain answer");
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
		});
		assertThat(mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8()).get("stream").asBoolean())
			.isTrue();
	}

	@Test
	void serverThatRefusesStreamOptionsIsAskedAgainWithoutThemAndNeverWithThemAgain() throws Exception {
		this.upstreams.primary().enqueue(Answers.json(400, "{\"error\":{\"message\":\"Unrecognized request "
				+ "argument supplied: stream_options\",\"type\":\"invalid_request_error\",\"code\":null}}"));
		this.upstreams.primary().enqueue(sse(Answers.stream("first")));
		this.upstreams.primary().enqueue(sse(Answers.stream("second")));
		this.upstreams.runner().run((context) -> {
			assertThat(FakeUpstream.chat(context).content()).isEqualTo("first");
			assertThat(FakeUpstream.chat(context).content()).isEqualTo("second");
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(2));
		});
		List<JsonNode> sent = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			sent.add(mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8()));
		}
		assertThat(sent).extracting((body) -> body.has("stream_options")).containsExactly(true, false, false);
		assertThat(sent).extracting((body) -> body.get("stream").asBoolean()).containsExactly(true, true, true);
	}

	@Test
	void serverThatRefusesStreamingIsSentPlainRequestsFromThenOn() throws Exception {
		this.upstreams.primary().enqueue(Answers.json(400,
				"{\"error\":{\"message\":\"stream is not supported by this server\",\"type\":\"invalid_request_error\"}}"));
		this.upstreams.primary().enqueue(completion("plain one"));
		this.upstreams.primary().enqueue(completion("plain two"));
		this.upstreams.runner().run((context) -> {
			assertThat(FakeUpstream.chat(context).content()).isEqualTo("plain one");
			assertThat(FakeUpstream.chat(context).content()).isEqualTo("plain two");
		});
		this.upstreams.primary().takeRequest();
		assertThat(mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8()).has("stream")).isFalse();
		assertThat(mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8()).has("stream")).isFalse();
	}

	@Test
	void hangingPrimaryCostsOneFirstTokenTimeoutWithTheBuiltInDefaults() {
		this.upstreams.primary().setDispatcher(new Gate(completion("too late")));
		this.upstreams.backup().enqueue(completion("from backup"));
		// the built-in defaults: first-token-timeout 10s, timeout 60s, deadline 90s, 3 attempts
		this.upstreams.runner().run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			CircuitBreaker primary = endpoint(context, "primary").circuitBreaker();
			StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
				.expectSubscription()
				.then(() -> awaitRequests(this.upstreams.primary(), 1))
				.expectNoEvent(Duration.ofMillis(9999))
				.then(() -> assertThat(BreakerCalls.of(primary)).isEqualTo(BreakerCalls.NONE))
				.thenAwait(Duration.ofMillis(1))
				// the breaker learns at the first-token deadline, not when the 60 s timeout would fire
				.then(() -> assertThat(BreakerCalls.of(primary)).isEqualTo(BreakerCalls.failures(1)))
				.assertNext((answer) -> {
					assertThat(answer.tier()).isEqualTo(Tier.FALLBACK);
					assertThat(answer.content()).isEqualTo("from backup");
					assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.TIMEOUT,
							Outcome.SUCCESS);
					assertThat(answer.attempts().get(0).duration()).isEqualTo(Duration.ofSeconds(10));
					assertThat(answer.latency()).isEqualTo(Duration.ofSeconds(10));
				})
				.expectComplete()
				.verify(VERIFY);
			assertThat(this.upstreams.primary().getRequestCount()).as("no retry on the hanging primary").isOne();
		});
	}

	@Test
	void firstTokenTimeoutIsRetriedOnTheSameEndpointWhenNoLaterEndpointIsAvailable() {
		this.upstreams.primary().setDispatcher(new Gate(completion("too late")));
		this.upstreams.runner().run((context) -> {
			endpoint(context, "backup").circuitBreaker().transitionToForcedOpenState();
			LlmGateway gateway = context.getBean(LlmGateway.class);
			StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
				.expectSubscription()
				.then(() -> awaitRequests(this.upstreams.primary(), 1))
				// each first-token timeout, then the retry's backoff of a few milliseconds
				.thenAwait(Duration.ofMillis(10_010))
				.then(() -> awaitRequests(this.upstreams.primary(), 2))
				.thenAwait(Duration.ofMillis(10_010))
				.then(() -> awaitRequests(this.upstreams.primary(), 3))
				.thenAwait(Duration.ofMillis(10_010))
				.assertNext((answer) -> {
					assertThat(answer.tier()).isEqualTo(Tier.BUSY);
					assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.TIMEOUT,
							Outcome.TIMEOUT, Outcome.TIMEOUT, Outcome.BREAKER_OPEN);
				})
				.expectComplete()
				.verify(VERIFY);
		});
	}

	@Test
	void steadyFifteenSecondAnswerTripsNothingInChatOrInAStream() {
		List<String> words = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			words.add("w" + i + " ");
		}
		Semaphore streamPace = new Semaphore(0);
		Semaphore chatPace = new Semaphore(0);
		this.upstreams.primary().enqueue(steady(words, streamPace));
		this.upstreams.primary().enqueue(steady(words, chatPace));
		String whole = String.join("", words);
		this.upstreams.runner().run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			LlmEndpoint primary = endpoint(context, "primary");
			VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
			List<ChatChunk> chunks = new CopyOnWriteArrayList<>();
			CountDownLatch streamed = new CountDownLatch(1);
			gateway.stream(ChatRequest.ofUser("a long story")).doFinally((signal) -> streamed.countDown()).subscribe(chunks::add);
			// a word every 500 ms of virtual time, each let go once the one before it has reached the caller
			for (int i = 0; i < words.size(); i++) {
				int seen = i + 1;
				if (i > 0) {
					time.advanceTimeBy(Duration.ofMillis(500));
				}
				streamPace.release();
				await().atMost(Duration.ofSeconds(10)).until(() -> chunks.size() >= seen);
			}
			time.advanceTimeBy(Duration.ofMillis(500));
			streamPace.release();
			assertThat(streamed.await(20, TimeUnit.SECONDS)).isTrue();
			CompletableFuture<ChatResponse> answered = gateway.chat(ChatRequest.ofUser("a long story")).toFuture();
			// the chat's chunks are not seen until its answer: its first token is, in the endpoint's times
			chatPace.release();
			await().atMost(Duration.ofSeconds(10)).until(() -> primary.firstTokenTimes().count() == 2);
			for (int i = 1; i < words.size(); i++) {
				time.advanceTimeBy(Duration.ofMillis(500));
				chatPace.release();
			}
			time.advanceTimeBy(Duration.ofMillis(500));
			chatPace.release();
			ChatResponse answer = answered.get(20, TimeUnit.SECONDS);
			assertThat(answer.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(answer.content()).isEqualTo(whole);
			assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
			assertThat(answer.latency()).isGreaterThan(Duration.ofSeconds(14));
			assertThat(chunks.stream().map(ChatChunk::content).collect(Collectors.joining())).isEqualTo(whole);
			assertThat(chunks).allSatisfy((chunk) -> assertThat(chunk.tier()).isEqualTo(Tier.PRIMARY));
			CircuitBreaker.Metrics metrics = primary.circuitBreaker().getMetrics();
			assertThat(metrics.getNumberOfSuccessfulCalls()).isEqualTo(2);
			assertThat(metrics.getNumberOfFailedCalls()).isZero();
			assertThat(metrics.getNumberOfSlowCalls()).as("a long answer is not a slow provider").isZero();
		});
	}

	@Test
	void breakerThatOpensReleasesTheCallsWaitingForTheirFirstTokenToTheNextEndpoint() {
		Gate held = new Gate(completion("too late"));
		this.upstreams.primary().setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
				return request.getBody().utf8().contains("wait") ? held.dispatch(request)
						: Answers.json(500, "{\"error\":{\"message\":\"down\"}}");
			}
		});
		this.upstreams.backup().setDispatcher(answering("from backup"));
		this.upstreams.runner()
			// the failures counted as they end: in start order they would wait up to 5 s for the held
			// calls that started before them (StartOrderTests)
			.withPropertyValues("llm.endpoints.primary.circuit-breaker.sliding-window-size=4",
					"llm.endpoints.primary.circuit-breaker.start-order-wait=0ms",
					"llm.endpoints.primary.first-token-timeout=60s", "llm.defaults.retry.max-attempts=1")
			.run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				List<ChatResponse> released = new CopyOnWriteArrayList<>();
				List<ChatChunk> releasedStream = new CopyOnWriteArrayList<>();
				for (int i = 0; i < 3; i++) {
					gateway.chat(ChatRequest.ofUser("wait " + i)).subscribe(released::add);
				}
				gateway.stream(ChatRequest.ofUser("wait in a stream")).subscribe(releasedStream::add);
				awaitRequests(this.upstreams.primary(), 4);
				for (int i = 0; i < 4; i++) {
					assertThat(FakeUpstream.chat(context, ChatRequest.ofUser("fail " + i)).tier()).isEqualTo(Tier.FALLBACK);
				}
				CircuitBreaker primary = endpoint(context, "primary").circuitBreaker();
				assertThat(primary.getState()).isEqualTo(CircuitBreaker.State.OPEN);
				await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> {
					assertThat(released).hasSize(3);
					assertThat(releasedStream).isNotEmpty();
				});
				assertThat(released).allSatisfy((answer) -> {
					assertThat(answer.tier()).isEqualTo(Tier.FALLBACK);
					assertThat(answer.content()).isEqualTo("from backup");
					assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.RELEASED,
							Outcome.SUCCESS);
				});
				assertThat(releasedStream).allSatisfy((chunk) -> assertThat(chunk.tier()).isEqualTo(Tier.FALLBACK));
				// the four failures only: a released call is not recorded twice, nor at all
				assertThat(BreakerCalls.of(primary)).isEqualTo(BreakerCalls.failures(4));
				assertThat(endpoint(context, "primary").bulkhead().getMetrics().getAvailableConcurrentCalls())
					.isEqualTo(50);
				held.open();
			});
	}

	@Test
	void operatorForcingTheBreakerOpenReleasesTheWaitingCallsToo() {
		Gate held = new Gate(completion("too late"));
		this.upstreams.primary().setDispatcher(held);
		this.upstreams.backup().setDispatcher(answering("from backup"));
		this.upstreams.runner().run((context) -> {
			List<ChatResponse> answers = new CopyOnWriteArrayList<>();
			context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("hello")).subscribe(answers::add);
			awaitRequests(this.upstreams.primary(), 1);
			endpoint(context, "primary").circuitBreaker().transitionToForcedOpenState();
			await().atMost(Duration.ofSeconds(5)).until(() -> answers.size() == 1);
			assertThat(answers.get(0).attempts()).extracting(Attempt::outcome).containsExactly(Outcome.RELEASED,
					Outcome.SUCCESS);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
			held.open();
		});
	}


	// An answer whose words come one at a time, each in its own chunk, then finish, usage and [DONE]:
	// each word, and the end, when the test lets it go (one permit each), so that its pace is virtual.
	private static MockResponse steady(List<String> words, Semaphore pace) {
		return new MockResponse.Builder().code(200)
			.setHeader("Content-Type", "text/event-stream")
			.removeHeader("Content-Length")
			.setHeader("Transfer-Encoding", "chunked")
			.socketHandler((socket) -> {
				try (BufferedSink sink = Okio.buffer(socket.getSink())) {
					for (String word : words) {
						if (!pace.tryAcquire(20, TimeUnit.SECONDS)) {
							return;
						}
						chunk(sink, Answers.content(word));
					}
					if (!pace.tryAcquire(20, TimeUnit.SECONDS)) {
						return;
					}
					chunk(sink, Answers.finish("stop"));
					chunk(sink, Answers.usage(10, words.size()));
					chunk(sink, "data: [DONE]\n\n");
					sink.writeUtf8("0\r\n\r\n").flush();
				}
				catch (IOException ex) {
					// the client went away first
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				finally {
					socket.cancel();
				}
			})
			.build();
	}

	private static void chunk(BufferedSink sink, String event) throws IOException {
		byte[] bytes = event.getBytes(StandardCharsets.UTF_8);
		sink.writeUtf8(Integer.toHexString(bytes.length)).writeUtf8("\r\n").write(bytes).writeUtf8("\r\n");
		sink.flush();
	}

	private static String textOf(String sse) {
		StringBuilder text = new StringBuilder();
		for (String line : sse.split("\n")) {
			if (line.startsWith("data: {")) {
				JsonNode choices = mapper.readTree(line.substring(6)).get("choices");
				if (choices != null && !choices.isEmpty() && choices.get(0).get("delta").hasNonNull("content")) {
					text.append(choices.get(0).get("delta").get("content").asString());
				}
			}
		}
		return text.toString();
	}

	private static void awaitRequests(mockwebserver3.MockWebServer server, int count) {
		await().atMost(Duration.ofSeconds(10)).until(() -> server.getRequestCount() >= count);
	}

}
