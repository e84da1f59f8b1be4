package dev.llmresilience.protocol.anthropic;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.engine.TestEndpoints;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.Wire;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import reactor.test.StepVerifier;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.web.reactive.function.client.WebClient;

import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.Answers.sse;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Anthropic's streamed Messages API, against a real local HTTP server that replays the recorded SSE
 * transcripts byte for byte.
 */
class AnthropicStreamParsingTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private final MockWebServer server = new MockWebServer();

	private AnthropicClient client;

	@BeforeEach
	void start() throws Exception {
		this.server.start();
		EndpointSettings settings = TestEndpoints.settings("claude", this.server.url("/v1").toString(),
				Duration.ofSeconds(30), Duration.ofSeconds(30), 1, 5);
		ClientSettings client = settings.client();
		this.client = new AnthropicClientFactory(new UpstreamFailures(Clock.systemUTC()), WebClient::builder)
			.create(client);
	}

	@AfterEach
	void stop() {
		this.client.close();
		this.server.close();
	}

	@Test
	void chatAsksForTheWholeMessageAndStreamForEvents() throws Exception {
		this.server.enqueue(Wire.ANTHROPIC.answer("whole"));
		this.server.enqueue(sse(Wire.ANTHROPIC.stream("streamed")));
		assertThat(this.client.chat(ChatRequest.ofUser("Hi")).block(WAIT).content()).isEqualTo("whole");
		assertThat(this.client.stream(ChatRequest.ofUser("Hi")).map(CompletionDelta::content).collectList().block(WAIT))
			.contains("streamed");
		RecordedRequest chat = this.server.takeRequest();
		assertThat(chat.getHeaders().get("Accept")).isEqualTo("application/json");
		assertThat(mapper.readTree(chat.getBody().utf8()).has("stream")).isFalse();
		RecordedRequest stream = this.server.takeRequest();
		assertThat(stream.getHeaders().get("Accept")).startsWith("text/event-stream");
		assertThat(mapper.readTree(stream.getBody().utf8()).get("stream").asBoolean()).isTrue();
	}

	@ParameterizedTest(name = "{0}")
	@CsvSource(delimiter = '|', textBlock = """
			sdkpy-stream-basic-with-ping.sse        | Hello there!                                    | stop           | 11  | 6  | claude-3-opus-latest
			sdkpy-recorded-stream-padded.derived.sse| [12345,67890]                                   | stop           | 135 | 10 | claude-sonnet-4-5-20250929
			sdkpy-stream-tool-use.sse               | I'll check the current weather in Paris for you. | tool_calls     | 377 | 65 | claude-sonnet-4-20250514
			sdkpy-stream-refusal.sse                | ''                                              | content_filter | 20  | 0  | claude-opus-4-7
			""")
	void everyRecordedStreamParsesToItsTextFinishReasonUsageAndModel(String fixture, String text, String finishReason,
			int promptTokens, int completionTokens, String model) {
		this.server.enqueue(sse(Answers.fixture("anthropic/" + fixture.strip())));
		List<CompletionDelta> deltas = this.client.stream(ChatRequest.ofUser("Hi")).collectList().block(WAIT);
		assertThat(deltas.stream().map(CompletionDelta::content).collect(Collectors.joining())).isEqualTo(text);
		assertThat(deltas.stream().map(CompletionDelta::finishReason).filter((reason) -> reason != null))
			.containsExactly(finishReason);
		assertThat(deltas.stream().map(CompletionDelta::usage).filter((usage) -> usage != null))
			.containsExactly(new Usage(promptTokens, completionTokens));
		assertThat(deltas).extracting(CompletionDelta::model).containsOnly(model);
	}

	@Test
	void toolUseBlockBecomesOneToolCallNumberedAmongTheToolCalls() {
		this.server.enqueue(sse(Answers.fixture("anthropic/sdkpy-stream-tool-use.sse")));
		List<ToolCallDelta> pieces = this.client.stream(ChatRequest.ofUser("Weather in Paris?"))
			.flatMapIterable(CompletionDelta::toolCalls)
			.collectList()
			.block(WAIT);
		Map<Integer, List<ToolCallDelta>> byCall = pieces.stream()
			.collect(Collectors.groupingBy(ToolCallDelta::index, TreeMap::new, Collectors.toList()));
		assertThat(byCall).containsOnlyKeys(0);
		assertThat(byCall.get(0).get(0).id()).isEqualTo("toolu_01NRLabsLyVHZPKxbKvkfSMn");
		assertThat(byCall.get(0).get(0).name()).isEqualTo("get_weather");
		assertThat(byCall.get(0).subList(1, byCall.get(0).size())).allSatisfy((piece) -> {
			assertThat(piece.id()).isNull();
			assertThat(piece.name()).isNull();
		});
		assertThat(pieces.stream().map(ToolCallDelta::arguments).collect(Collectors.joining()))
			.isEqualTo("{\"location\": \"Paris\"}");
	}

	@Test
	void errorEventBeforeAnyContentIsTheOverloadedServerError() {
		this.server.enqueue(sse(Answers.fixture("anthropic/sdkpy-test-stream-error-event-overloaded.sse")));
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOfSatisfying(LlmUpstreamException.class,
					(upstream) -> {
						assertThat(upstream.outcome()).isEqualTo(Outcome.SERVER_ERROR);
						assertThat(upstream.status()).isEqualTo(529);
						assertThat(upstream).hasMessageContaining("Overloaded");
					}))
			.verify(WAIT);
	}

	@Test
	void errorEventAfterTheFirstTextEndsTheStreamWithThatError() {
		this.server.enqueue(sse(Answers.fixture("anthropic/composed-stream-midstream-overloaded-error.sse")));
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")).map(CompletionDelta::content))
			.expectNext("")
			.expectNext("Hello")
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOfSatisfying(LlmUpstreamException.class,
					(upstream) -> assertThat(upstream.outcome()).isEqualTo(Outcome.SERVER_ERROR)))
			.verify(WAIT);
	}

	@Test
	void bodyThatEndsBeforeMessageStopIsAnError() {
		String whole = Answers.fixture("anthropic/sdkpy-stream-basic-with-ping.sse");
		this.server.enqueue(sse(whole.substring(0, whole.indexOf("event: content_block_stop"))));
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")).map(CompletionDelta::content))
			.expectNext("", "Hello", " there", "!")
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOfSatisfying(LlmUpstreamException.class,
					(upstream) -> {
						assertThat(upstream.outcome()).isEqualTo(Outcome.CONNECTION_FAILED);
						assertThat(upstream).hasMessageContaining("before message_stop");
					}))
			.verify(WAIT);
	}

	@Test
	void eventThatIsNotJsonIsAMalformedResponse() {
		this.server.enqueue(sse("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n"));
		StepVerifier.create(this.client.stream(ChatRequest.ofUser("Hi")))
			.expectErrorSatisfies((error) -> assertThat(error).isInstanceOfSatisfying(LlmUpstreamException.class,
					(upstream) -> assertThat(upstream.outcome()).isEqualTo(Outcome.MALFORMED_RESPONSE)))
			.verify(WAIT);
	}

	@Test
	void plainJsonAnswerToAStreamRequestIsAcceptedAsOneChunk() {
		this.server.enqueue(json(200, Answers.fixture("anthropic/sdkpy-recorded-200-message.body.derived.json")));
		List<CompletionDelta> deltas = this.client.stream(ChatRequest.ofUser("Extract the order")).collectList()
			.block(WAIT);
		assertThat(deltas).singleElement().satisfies((delta) -> {
			assertThat(delta.content()).startsWith("{\"items\":[{\"product_name\":\"Green Tea\"");
			assertThat(delta.finishReason()).isEqualTo("stop");
			assertThat(delta.usage()).isEqualTo(new Usage(406, 50));
			assertThat(delta.model()).isEqualTo("claude-sonnet-4-5-20250929");
		});
	}

}
