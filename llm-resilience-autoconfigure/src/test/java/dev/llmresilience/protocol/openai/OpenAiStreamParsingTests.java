package dev.llmresilience.protocol.openai;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.engine.TestEndpoints;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmContextLengthExceededException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.Answers.Ending;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.netty.resources.ConnectionProvider;
import reactor.test.StepVerifier;

import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.WebClient;

import static dev.llmresilience.support.Answers.DONE;
import static dev.llmresilience.support.Answers.content;
import static dev.llmresilience.support.Answers.role;
import static dev.llmresilience.support.Answers.sse;
import static dev.llmresilience.support.Answers.streamFixture;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The OpenAI-compatible client's streaming, against a real local HTTP server that replays recorded
 * SSE transcripts.
 */
class OpenAiStreamParsingTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final MockWebServer server = new MockWebServer();

	private final CountDownLatch release = new CountDownLatch(1);

	private ConnectionProvider connections;

	private OpenAiChatClient client;

	@BeforeEach
	void start() throws Exception {
		this.server.start();
		EndpointSettings settings = TestEndpoints.settings("primary", this.server.url("/v1").toString(),
				Duration.ofSeconds(30), Duration.ofSeconds(30), 1, 5);
		this.connections = OpenAiClientFactory.connectionProvider(settings.client());
		this.client = new OpenAiClientFactory(new UpstreamFailures(Clock.systemUTC())).create(settings.client(),
				WebClient.builder(), this.connections);
	}

	@AfterEach
	void stop() {
		this.release.countDown();
		this.connections.dispose();
		this.server.close();
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			pysdk-stream-basic-stop-usage.sse                  | 159  | I'm unable to provide real-time weather updates. | a weather app. | stop       | 14 | 30
			composed-deepseek-keepalive-then-openai-stream.sse | 159  | I'm unable to provide real-time weather updates. | a weather app. | stop       | 14 | 30
			pysdk-stream-content-logprobs.sse                  | 4    | Foo!                                             | Foo!           | stop       | 9  | 2
			pysdk-stream-finish-length-max_tokens1.sse         | 2    | '{"'                                             | '{"'           | length     | 79 | 1
			pysdk-stream-json-schema-response-format.sse       | 53   | '{"city":"San Francisco","temperature":61'       | '"units":"f"}' | stop       | 79 | 14
			pysdk-stream-n3-multiple-choices.sse               | 53   | '{"city":"San Francisco","temperature":65'       | '"units":"f"}' | stop       | 79 | 42
			pysdk-stream-refusal.sse                           | 0    | ''                                               | ''             | stop       | 79 | 11
			pysdk-stream-refusal-logprobs.sse                  | 0    | ''                                               | ''             | stop       | 79 | 12
			pysdk-stream-tool-call-nonstrict.sse               | 0    | ''                                               | ''             | tool_calls | 44 | 16
			pysdk-stream-tool-call-strict.sse                  | 0    | ''                                               | ''             | tool_calls | 48 | 19
			pysdk-stream-tool-call-pydantic.sse                | 0    | ''                                               | ''             | tool_calls | 76 | 24
			pysdk-stream-parallel-tool-calls.sse               | 0    | ''                                               | ''             | tool_calls | 149| 60
			dotnet-stream-include-usage-refusal.derived.sse    | 44   | I'm sorry, I can't assist with that request.     | that request.  | stop       | 26 | 10
			dotnet-stream-include-usage.derived.sse            | 3300 | The best pizza toppings can vary                 | the pizza experience. | stop | 22 | 712
			""")
	void everyRecordedStreamParsesToItsTextFinishReasonAndUsage(String fixture, int length, String start, String end,
			String finishReason, int promptTokens, int completionTokens) {
		this.server.enqueue(sse(streamFixture(fixture)));
		List<CompletionDelta> deltas = this.client.stream(ChatRequest.ofUser("Hi")).collectList().block(WAIT);
		String text = deltas.stream().map(CompletionDelta::content).collect(Collectors.joining());
		assertThat(text).hasSize(length).startsWith(start).endsWith(end);
		assertThat(deltas.stream().map(CompletionDelta::finishReason).filter((reason) -> reason != null))
			.containsExactly(finishReason);
		assertThat(deltas.stream().map(CompletionDelta::usage).filter((usage) -> usage != null))
			.containsExactly(new Usage(promptTokens, completionTokens));
		assertThat(deltas.get(deltas.size() - 1).usage()).isNotNull();
	}

	@Test
	void toolCallDeltasCarryTheirIndexIdNameAndArgumentFragments() {
		this.server.enqueue(sse(streamFixture("pysdk-stream-parallel-tool-calls.sse")));
		List<ToolCallDelta> pieces = this.client.stream(ChatRequest.ofUser("Weather and AAPL?"))
			.flatMapIterable(CompletionDelta::toolCalls)
			.collectList()
			.block(WAIT);
		Map<Integer, List<ToolCallDelta>> byCall = pieces.stream()
			.collect(Collectors.groupingBy(ToolCallDelta::index, TreeMap::new, Collectors.toList()));
		assertThat(byCall).containsOnlyKeys(0, 1);
		assertThat(byCall.get(0).get(0).id()).isEqualTo("call_JMW1whyEaYG438VE1OIflxA2");
		assertThat(byCall.get(0).get(0).name()).isEqualTo("GetWeatherArgs");
		assertThat(byCall.get(0).subList(1, byCall.get(0).size())).allSatisfy((piece) -> {
			assertThat(piece.id()).isNull();
			assertThat(piece.name()).isNull();
		});
		assertThat(byCall.get(1).get(0).name()).isEqualTo("get_stock_price");
		assertThat(arguments(byCall.get(0))).isEqualTo("{\"city\": \"Edinburgh\", \"country\": \"GB\", \"units\": \"c\"}");
		assertThat(arguments(byCall.get(1))).isEqualTo("{\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"}");
	}

	private static String arguments(List<ToolCallDelta> pieces) {
		return pieces.stream().map(ToolCallDelta::arguments).collect(Collectors.joining());
	}

	@Test
	void asksForAStreamWithUsageAndAcceptsEventStreams() throws Exception {
		this.server.enqueue(sse(Answers.stream("Hi")));
		this.client.stream(ChatRequest.ofUser("Hello")).blockLast(WAIT);
		RecordedRequest request = this.server.takeRequest();
		assertThat(request.getHeaders().get("Accept")).contains("text/event-stream");
		assertThat(request.getBody().utf8()).contains("\"stream\":true")
			.contains("\"stream_options\":{\"include_usage\":true}")
			.contains("\"model\":\"m-primary\"");
	}

	@Test
	void commentsCrlfAndMultiLineDataAreDecoded() {
		// The recorded basic stream, re-framed: CRLF line ends, a keep-alive comment before every event,
		// and each JSON object split over two data lines (joined with a newline, which JSON allows).
		String reframed = streamFixture("pysdk-stream-basic-stop-usage.sse").replace("\n\n", "\n\n: keep-alive\n\n")
			.replace(",\"choices\"", ",\ndata: \"choices\"")
			.replace("\n", "\r\n");
		this.server.enqueue(sse(reframed));
		String text = this.client.stream(ChatRequest.ofUser("Hi"))
			.map(CompletionDelta::content)
			.collect(Collectors.joining())
			.block(WAIT);
		assertThat(text).isEqualTo("I'm unable to provide real-time weather updates. To get the current weather in "
				+ "San Francisco, I recommend checking a reliable weather website or a weather app.");
	}

	@Test
	void springsDecoderJoinsMultiLineDataAndSkipsCommentsOverCrlf() {
		// The decoder the client relies on, on openai-node's own test transcript.
		this.server.enqueue(sse(streamFixture("openai-node-test-sse-comment-crlf-multiline.sse")));
		List<ServerSentEvent<String>> events = WebClient.create(this.server.url("/").toString())
			.get()
			.retrieve()
			.bodyToFlux(new ParameterizedTypeReference<ServerSentEvent<String>>() {
			})
			.filter((event) -> event.data() != null)
			.collectList()
			.block(WAIT);
		assertThat(events).singleElement().satisfies((event) -> {
			assertThat(event.event()).isEqualTo("update");
			assertThat(event.data()).isEqualTo("first\nsecond");
		});
	}

	@Test
	void anErrorEventOnHttp200IsClassifiedLikeAnErrorBody() {
		this.server.enqueue(sse(role() + content("Hel")
				+ "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\",\"code\":null}}\n\n"));
		this.server.enqueue(sse(role() + "data: {\"error\":{\"code\":429,\"message\":\"Rate limited upstream\"}}\n\n"));
		this.server.enqueue(sse(role()
				+ "data: {\"error\":{\"message\":\"Filtered\",\"type\":null,\"code\":\"content_filter\"}}\n\n"));
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectNextMatches((delta) -> delta.content().isEmpty())
			.expectNextMatches((delta) -> delta.content().equals("Hel"))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(LlmUpstreamException.class)
				.hasMessageContaining("The server had an error")
				.extracting((e) -> ((LlmUpstreamException) e).outcome())
				.isEqualTo(Outcome.SERVER_ERROR))
			.verify(WAIT);
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectNextCount(1)
			.expectErrorSatisfies((error) -> assertThat(FailureClassifier.outcomeOf(error)).isEqualTo(Outcome.RATE_LIMITED))
			.verify(WAIT);
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectNextCount(1)
			.expectErrorSatisfies(
					(error) -> assertThat(FailureClassifier.outcomeOf(error)).isEqualTo(Outcome.CONTENT_FILTERED))
			.verify(WAIT);
	}

	@Test
	void anEventNamedErrorIsAFailure() {
		this.server.enqueue(sse(content("Hi") + "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":"
				+ "\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"));
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectNextCount(1)
			.expectErrorSatisfies((error) -> assertThat(error).hasMessageContaining("Overloaded")
				.extracting(FailureClassifier::outcomeOf)
				.isEqualTo(Outcome.SERVER_ERROR))
			.verify(WAIT);
	}

	@Test
	void aBodyThatEndsBeforeDoneIsATruncatedStream() {
		this.server.enqueue(sse(role() + content("Hel") + content("lo")));
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectNextCount(3)
			.expectErrorSatisfies((error) -> assertThat(error).hasMessageContaining("[DONE]")
				.extracting(FailureClassifier::outcomeOf)
				.isEqualTo(Outcome.CONNECTION_FAILED))
			.verify(WAIT);
	}

	@Test
	void aConnectionCutMidBodyIsATransportError() {
		this.server.enqueue(sse(Ending.CUT, this.release, role(), content("Hel")));
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectNextCount(2)
			.expectErrorSatisfies((error) -> assertThat(new UpstreamFailures(Clock.systemUTC())
				.classifyError("primary", error)).extracting(FailureClassifier::outcomeOf)
				.isEqualTo(Outcome.CONNECTION_FAILED))
			.verify(WAIT);
	}

	@Test
	void anEventThatIsNotJsonIsMalformed() {
		this.server.enqueue(sse(role() + "data: {not json\n\n" + DONE));
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectNextCount(1)
			.expectErrorSatisfies((error) -> assertThat(FailureClassifier.outcomeOf(error))
				.isEqualTo(Outcome.MALFORMED_RESPONSE))
			.verify(WAIT);
	}

	@Test
	void errorStatusesAreClassifiedExactlyLikeChat() {
		this.server.enqueue(new MockResponse.Builder().code(429)
			.setHeader("Retry-After", "2")
			.body("{\"error\":{\"message\":\"Slow down\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}")
			.build());
		this.server.enqueue(new MockResponse.Builder().code(400)
			.body("{\"error\":{\"message\":\"Too long\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}")
			.build());
		this.server.enqueue(new MockResponse.Builder().code(401)
			.body("{\"error\":{\"message\":\"Incorrect API key provided: sk-test-123456789\",\"code\":\"invalid_api_key\"}}")
			.build());
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectErrorSatisfies((error) -> {
				assertThat(FailureClassifier.outcomeOf(error)).isEqualTo(Outcome.RATE_LIMITED);
				assertThat(((LlmUpstreamException) error).retryAfter()).isEqualTo(Duration.ofSeconds(2));
			})
			.verify(WAIT);
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectError(LlmContextLengthExceededException.class)
			.verify(WAIT);
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectErrorSatisfies((error) -> assertThat(error).hasMessageNotContaining("sk-test-123456789")
				.extracting(FailureClassifier::outcomeOf)
				.isEqualTo(Outcome.CONFIGURATION_ERROR))
			.verify(WAIT);
	}

	@Test
	void aProviderThatIgnoresStreamAndAnswersJsonGivesOneDelta() {
		this.server.enqueue(new MockResponse.Builder().code(200)
			.setHeader("Content-Type", "application/json")
			.body("{\"model\":\"m\",\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"Whole\"},"
					+ "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}")
			.build());
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectNext(new CompletionDelta("Whole", List.of(), "stop", new Usage(3, 1), "m"))
			.verifyComplete();
	}

}
