package dev.llmresilience.openaiapi;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.errors.InternalServerException;
import com.openai.errors.NotFoundException;
import com.openai.errors.UnauthorizedException;
import com.openai.helpers.ResponseAccumulator;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseInputItem;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseOutputText;
import com.openai.models.responses.ResponseStatus;
import com.openai.models.responses.ResponseStreamEvent;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import org.springframework.boot.WebApplicationType;

import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * OpenAI's Responses API ({@code POST /v1/responses}) as its clients see it, through the official
 * OpenAI Java SDK ({@code client.responses()}, its own retries off unless a test turns them on):
 * an answer, a stream read by the SDK's accumulator, a tool round trip, busy answers, broken
 * streams, wrong keys and unknown models, each upstream a chat-completions endpoint. Run once
 * against a WebFlux application and once against a Servlet one.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ResponsesApiContract {

	private static final String CLIENT_KEY = OpenAiApiContract.CLIENT_KEY;

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private FakeUpstream upstreams;

	private ApiServer server;

	private OpenAIClient client;

	private final HttpClient http = HttpClient.newHttpClient();

	abstract WebApplicationType type();

	@BeforeAll
	void startApplication() {
		this.upstreams = FakeUpstream.start();
		this.server = ApiServer.start(type(), "llm.openai-api.enabled=true", "llm.openai-api.api-keys=" + CLIENT_KEY,
				"llm.endpoints.primary.base-url=" + this.upstreams.primary().url("/v1"),
				"llm.endpoints.primary.model=gpt-4o-mini", "llm.endpoints.primary.api-key=" + FakeUpstream.PRIMARY_KEY,
				"llm.endpoints.backup.base-url=" + this.upstreams.backup().url("/v1"),
				"llm.endpoints.backup.model=backup-model", "llm.endpoints.backup.priority=1", "llm.routes.cheap=backup",
				"llm.defaults.retry.max-attempts=1");
		this.client = OpenAIOkHttpClient.builder().baseUrl(this.server.baseUrl()).apiKey(CLIENT_KEY).maxRetries(0).build();
	}

	@BeforeEach
	void forgetEarlierRequests() throws InterruptedException {
		for (mockwebserver3.MockWebServer upstream : List.of(this.upstreams.primary(), this.upstreams.backup())) {
			while (upstream.takeRequest(0, java.util.concurrent.TimeUnit.SECONDS) != null) {
				// a request an earlier test did not look at
			}
		}
	}

	@AfterEach
	void closeBreakers() {
		this.server.context().getBean(EndpointRegistry.class).endpoints().forEach((endpoint) -> endpoint.circuitBreaker().reset());
	}

	@AfterAll
	void stopApplication() {
		this.client.close();
		this.server.close();
		this.upstreams.close();
	}

	@Test
	void anAnswerIsAResponseObjectWithTierEndpointAndRequestIdHeaders() throws Exception {
		this.upstreams.primary().enqueue(json(200, fixture("openai/spec-chat-completion-default.json")));
		HttpResponseFor<Response> raw = this.client.responses()
			.withRawResponse()
			.create(ResponseCreateParams.builder()
				.model("default")
				.instructions("You are a helpful assistant.")
				.input("Hello!")
				.maxOutputTokens(100)
				.temperature(0.5)
				.build());
		Response response = raw.parse();
		assertThat(raw.statusCode()).isEqualTo(200);
		assertThat(raw.headers().values("x-llm-tier")).containsExactly("PRIMARY");
		assertThat(raw.headers().values("x-llm-endpoint")).containsExactly("primary");
		assertThat(raw.headers().values("x-request-id")).singleElement().asString().isNotBlank();
		assertThat(response.id()).startsWith("resp_");
		assertThat(response.status()).hasValue(ResponseStatus.COMPLETED);
		assertThat(response.model().asString()).isEqualTo("gpt-5.4");
		assertThat(response.instructions().get().asString()).isEqualTo("You are a helpful assistant.");
		assertThat(response.temperature()).hasValue(0.5);
		assertThat(response.maxOutputTokens()).hasValue(100L);
		assertThat(texts(response)).containsExactly("Hello! How can I assist you today?");
		ResponseOutputText text = response.output().get(0).asMessage().content().get(0).asOutputText();
		assertThat(text.annotations()).isEmpty();
		assertThat(response.usage().get().inputTokens()).isEqualTo(19);
		assertThat(response.usage().get().outputTokens()).isEqualTo(10);
		assertThat(response.usage().get().totalTokens()).isEqualTo(29);
		JsonNode sent = mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8());
		assertThat(sent.get("model").asString()).isEqualTo("gpt-4o-mini");
		assertThat(sent.get("messages")).isEqualTo(mapper.readTree("[{\"role\":\"system\",\"content\":\"You are a helpful "
				+ "assistant.\"},{\"role\":\"user\",\"content\":\"Hello!\"}]"));
		assertThat(sent.get("max_tokens").asInt()).isEqualTo(100);
		assertThat(sent.get("temperature").asDouble()).isEqualTo(0.5);
	}

	@Test
	void aLengthCutIsAnIncompleteResponseSayingWhy() {
		this.upstreams.primary().enqueue(json(200, Answers.completionBody("Hel").replace("\"stop\"", "\"length\"")));
		Response response = this.client.responses()
			.create(ResponseCreateParams.builder().model("default").input("Hello!").maxOutputTokens(16).build());
		assertThat(response.status()).hasValue(ResponseStatus.INCOMPLETE);
		assertThat(response.incompleteDetails().get().reason())
			.hasValue(Response.IncompleteDetails.Reason.MAX_OUTPUT_TOKENS);
		assertThat(texts(response)).containsExactly("Hel");
	}

	@Test
	void aStreamIsTheResponseEventsTheSdkAccumulatesIntoTheAnswer() {
		this.upstreams.primary().enqueue(Answers.sse(Answers.streamFixture("pysdk-stream-basic-stop-usage.sse")));
		ResponseAccumulator accumulator = ResponseAccumulator.create();
		StringBuilder deltas = new StringBuilder();
		List<String> types = new ArrayList<>();
		try (StreamResponse<ResponseStreamEvent> stream = this.client.responses()
			.createStreaming(ResponseCreateParams.builder().model("default").input("What's the weather like in SF?").build())) {
			stream.stream().forEach((event) -> {
				accumulator.accumulate(event);
				event.outputTextDelta().ifPresent((delta) -> deltas.append(delta.delta()));
				types.add(type(event));
			});
		}
		String expected = "I'm unable to provide real-time weather updates. To get the current weather in "
				+ "San Francisco, I recommend checking a reliable weather website or a weather app.";
		assertThat(deltas).hasToString(expected);
		Response response = accumulator.response();
		assertThat(response.status()).hasValue(ResponseStatus.COMPLETED);
		assertThat(texts(response)).containsExactly(expected);
		assertThat(response.usage().get().inputTokens()).isEqualTo(14);
		assertThat(response.usage().get().outputTokens()).isEqualTo(30);
		assertThat(types.subList(0, 4)).containsExactly("response.created", "response.in_progress",
				"response.output_item.added", "response.content_part.added");
		assertThat(types.subList(types.size() - 4, types.size())).containsExactly("response.output_text.done",
				"response.content_part.done", "response.output_item.done", "response.completed");
		assertThat(types.subList(4, types.size() - 4)).isNotEmpty().containsOnly("response.output_text.delta");
	}

	@Test
	void aStreamIsFramedAsNamedServerSentEventsNumberedFromZero() throws Exception {
		this.upstreams.primary().enqueue(Answers.sse(Answers.stream("Hel", "lo")));
		HttpResponse<String> response = post("{\"model\":\"default\",\"stream\":true,\"input\":\"hi\"}",
				Map.of("x-request-id", "req-42"));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("content-type")).hasValueSatisfying((type) -> assertThat(type).startsWith("text/event-stream"));
		assertThat(response.headers().firstValue("x-request-id")).hasValue("req-42");
		assertThat(response.headers().firstValue("x-llm-tier")).hasValue("PRIMARY");
		List<String> events = Stream.of(response.body().split("\n\n")).map(String::strip).filter((e) -> !e.isEmpty()).toList();
		for (int i = 0; i < events.size(); i++) {
			String[] lines = events.get(i).split("\n");
			assertThat(lines).hasSize(2);
			assertThat(lines[0]).startsWith("event:");
			String name = lines[0].substring("event:".length()).strip();
			JsonNode data = mapper.readTree(lines[1].substring("data:".length()));
			assertThat(data.get("type").asString()).isEqualTo(name);
			assertThat(data.get("sequence_number").asInt()).isEqualTo(i);
		}
		assertThat(events.get(events.size() - 1)).matches("event: ?response\\.completed\n.*").doesNotContain("[DONE]");
	}

	@Test
	void toolRoundTripReachesTheProviderAsChatCompletionsWouldSendIt() throws Exception {
		JsonNode entries = mapper.readTree(fixture("openai/dotnet-record-parallel-tool-calls.json")).get("Entries");
		this.upstreams.primary().enqueue(json(200, mapper.writeValueAsString(entries.get(0).get("ResponseBody"))));
		this.upstreams.primary().enqueue(json(200, mapper.writeValueAsString(entries.get(1).get("ResponseBody"))));
		FunctionTool weather = FunctionTool.builder()
			.name("get_weather_for_city")
			.description("gets the current weather for a given city")
			.parameters(FunctionTool.Parameters.builder()
				.putAdditionalProperty("type", JsonValue.from("object"))
				.putAdditionalProperty("properties", JsonValue.from(Map.of("city_name", Map.of("type", "string",
						"description", "the name of a city, e.g. Johannesburg or Ho Chi Minh City."))))
				.putAdditionalProperty("required", JsonValue.from(List.of("city_name")))
				.build())
			.strict(Optional.empty())
			.build();
		List<ResponseInputItem> input = new ArrayList<>();
		input.add(ResponseInputItem.ofEasyInputMessage(com.openai.models.responses.EasyInputMessage.builder()
			.role(com.openai.models.responses.EasyInputMessage.Role.USER)
			.content("Tell me what's the current weather in the following cities: Santiago and Karachi.")
			.build()));
		Response first = this.client.responses()
			.create(ResponseCreateParams.builder().model("default").inputOfResponse(input).addTool(weather).build());
		List<ResponseFunctionToolCall> calls = first.output().stream().flatMap((item) -> item.functionCall().stream()).toList();
		assertThat(first.output()).allMatch(ResponseOutputItem::isFunctionCall);
		assertThat(calls).extracting(ResponseFunctionToolCall::callId)
			.containsExactly("call_SKQEHo7QVlJRoCtEzcrYZM9C", "call_CkjljlLr7IebPc4hnvetfiZ8");
		assertThat(calls).extracting(ResponseFunctionToolCall::arguments)
			.containsExactly("{\"city_name\": \"Santiago\"}", "{\"city_name\": \"Karachi\"}");
		assertThat(calls).allSatisfy((call) -> assertThat(call.id()).hasValueSatisfying((id) -> assertThat(id).startsWith("fc_")));
		assertThat(first.tools()).singleElement().satisfies((tool) -> assertThat(tool.asFunction().name())
			.isEqualTo("get_weather_for_city"));
		List<String> weathers = List.of("rainy", "sunny");
		for (int i = 0; i < calls.size(); i++) {
			input.add(ResponseInputItem.ofFunctionCall(calls.get(i)));
		}
		for (int i = 0; i < calls.size(); i++) {
			input.add(ResponseInputItem.ofFunctionCallOutput(ResponseInputItem.FunctionCallOutput.builder()
				.callId(calls.get(i).callId())
				.output(weathers.get(i))
				.build()));
		}
		Response second = this.client.responses()
			.create(ResponseCreateParams.builder().model("default").inputOfResponse(input).addTool(weather).build());
		assertThat(texts(second)).containsExactly("The current weather is as follows:\n- Santiago: Rainy\n- Karachi: Sunny");
		assertThat(sentBody(this.upstreams.primary().takeRequest())).isEqualTo(entries.get(0).get("RequestBody"));
		assertThat(sentBody(this.upstreams.primary().takeRequest())).isEqualTo(entries.get(1).get("RequestBody"));
	}

	@Test
	void streamedToolCallsAreFunctionCallItemsWithArgumentDeltas() {
		this.upstreams.primary().enqueue(Answers.sse(Answers.streamFixture("pysdk-stream-parallel-tool-calls.sse")));
		ResponseAccumulator accumulator = ResponseAccumulator.create();
		List<String> argumentsDone = new ArrayList<>();
		StringBuilder deltas = new StringBuilder();
		try (StreamResponse<ResponseStreamEvent> stream = this.client.responses()
			.createStreaming(ResponseCreateParams.builder().model("default").input("Weather and AAPL?").build())) {
			stream.stream().forEach((event) -> {
				accumulator.accumulate(event);
				event.functionCallArgumentsDelta().ifPresent((delta) -> deltas.append(delta.delta()));
				event.functionCallArgumentsDone().ifPresent((done) -> argumentsDone.add(done.name() + " " + done.arguments()));
			});
		}
		List<ResponseFunctionToolCall> calls = accumulator.response()
			.output()
			.stream()
			.flatMap((item) -> item.functionCall().stream())
			.toList();
		assertThat(calls).extracting(ResponseFunctionToolCall::callId)
			.containsExactly("call_JMW1whyEaYG438VE1OIflxA2", "call_DNYTawLBoN8fj3KN6qU9N1Ou");
		assertThat(calls).extracting(ResponseFunctionToolCall::name).containsExactly("GetWeatherArgs", "get_stock_price");
		assertThat(argumentsDone).containsExactly(
				"GetWeatherArgs {\"city\": \"Edinburgh\", \"country\": \"GB\", \"units\": \"c\"}",
				"get_stock_price {\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"}");
		assertThat(deltas).hasToString("{\"city\": \"Edinburgh\", \"country\": \"GB\", \"units\": \"c\"}"
				+ "{\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"}");
	}

	@Test
	void aWrongKeyIsRefusedWith401AndNothingGoesUpstream() {
		int before = this.upstreams.primary().getRequestCount();
		OpenAIClient stranger = OpenAIOkHttpClient.builder().baseUrl(this.server.baseUrl()).apiKey("sk-not-a-client-key")
			.maxRetries(0).build();
		try {
			UnauthorizedException error = catchThrowableOfType(UnauthorizedException.class, () -> stranger.responses()
				.create(ResponseCreateParams.builder().model("default").input("hi").build()));
			assertThat(error.statusCode()).isEqualTo(401);
			assertThat(error.code()).hasValue("invalid_api_key");
			assertThat(error.getMessage()).doesNotContain("sk-not-a-client-key");
		}
		finally {
			stranger.close();
		}
		assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(before);
	}

	@Test
	void anUnknownModelIs404NamingTheRoutes() {
		NotFoundException error = catchThrowableOfType(NotFoundException.class, () -> this.client.responses()
			.create(ResponseCreateParams.builder().model("gpt-9").input("hi").build()));
		assertThat(error.code()).hasValue("model_not_found");
		assertThat(error.getMessage()).contains("gpt-9").contains("default").contains("cheap");
	}

	@Test
	void aNamedRouteIsServedByItsEndpoints() {
		this.upstreams.backup().enqueue(Answers.completion("from backup"));
		HttpResponseFor<Response> response = this.client.responses()
			.withRawResponse()
			.create(ResponseCreateParams.builder().model("cheap").input("hi").build());
		assertThat(texts(response.parse())).containsExactly("from backup");
		assertThat(response.headers().values("x-llm-endpoint")).containsExactly("backup");
	}

	@Test
	void busyIs503WithRetryAfterFromWhenTheNextBreakerMayLetCallsThrough() {
		long opened = System.nanoTime();
		breakers().forEach((endpoint) -> endpoint.circuitBreaker().transitionToOpenState());
		int before = this.upstreams.primary().getRequestCount() + this.upstreams.backup().getRequestCount();
		for (boolean stream : new boolean[] { false, true }) {
			ResponseCreateParams params = ResponseCreateParams.builder().model("default").input("hi").build();
			InternalServerException error = catchThrowableOfType(InternalServerException.class, () -> {
				if (stream) {
					try (StreamResponse<ResponseStreamEvent> events = this.client.responses().createStreaming(params)) {
						events.stream().forEach((event) -> {
						});
					}
				}
				else {
					this.client.responses().create(params);
				}
			});
			assertThat(error.statusCode()).isEqualTo(503);
			assertThat(error.code()).hasValue("llm_busy");
			assertThat(error.headers().values("x-should-retry")).containsExactly("true");
			assertThat(error.headers().values("x-llm-tier")).containsExactly("BUSY");
			long elapsed = Duration.ofNanos(System.nanoTime() - opened).toMillis();
			long millis = Long.parseLong(error.headers().values("retry-after-ms").get(0));
			assertThat(millis).isBetween(30_000L - elapsed - 1, 30_000L);
			assertThat(Long.parseLong(error.headers().values("retry-after").get(0))).isEqualTo((millis + 999) / 1000);
		}
		assertThat(this.upstreams.primary().getRequestCount() + this.upstreams.backup().getRequestCount()).isEqualTo(before);
	}

	@Test
	void breakersForcedOpenByAnOperatorTellTheSdkNotToRetryEvenWithItsRetriesOn() {
		breakers().forEach((endpoint) -> endpoint.circuitBreaker().transitionToForcedOpenState());
		BusyCounter busy = this.server.context().getBean(BusyCounter.class);
		int before = busy.count();
		OpenAIClient retrying = OpenAIOkHttpClient.builder().baseUrl(this.server.baseUrl()).apiKey(CLIENT_KEY)
			.maxRetries(2).build();
		try {
			InternalServerException error = catchThrowableOfType(InternalServerException.class, () -> retrying.responses()
				.create(ResponseCreateParams.builder().model("default").input("hi").build()));
			assertThat(error.statusCode()).isEqualTo(503);
			assertThat(error.headers().values("x-should-retry")).containsExactly("false");
		}
		finally {
			retrying.close();
		}
		assertThat(busy.count() - before).isEqualTo(1);
	}

	@Test
	void aStreamThatBreaksAfterItStartedEndsWithAnErrorEventAndResponseFailed() throws Exception {
		CountDownLatch received = new CountDownLatch(1);
		this.upstreams.primary().enqueue(Answers.sse(Answers.Ending.STALL, received,
				Answers.content("Hello"), Answers.content(" wor")));
		StringBuilder text = new StringBuilder();
		List<ResponseStreamEvent> events = new ArrayList<>();
		try (StreamResponse<ResponseStreamEvent> stream = this.client.responses()
			.createStreaming(ResponseCreateParams.builder().model("default").input("hi").build())) {
			stream.stream().forEach((event) -> {
				events.add(event);
				event.outputTextDelta().ifPresent((delta) -> text.append(delta.delta()));
				if (text.toString().equals("Hello wor")) {
					received.countDown();
				}
			});
		}
		assertThat(text).hasToString("Hello wor");
		ResponseStreamEvent error = events.get(events.size() - 2);
		assertThat(error.error()).hasValueSatisfying((event) -> {
			assertThat(event.code()).hasValue("stream_interrupted");
			assertThat(event.message()).contains("broke off after it had started");
		});
		Response failed = events.get(events.size() - 1).failed().orElseThrow().response();
		assertThat(failed.status()).hasValue(ResponseStatus.FAILED);
		assertThat(failed.error().get().message()).contains("broke off after it had started");
		assertThat(texts(failed)).containsExactly("Hello wor");
		assertThat(events).noneMatch((event) -> event.completed().isPresent());
	}

	@Test
	void aBrokenStreamsLastEventsAreErrorAndResponseFailedOnTheWire() throws Exception {
		CountDownLatch received = new CountDownLatch(1);
		this.upstreams.primary().enqueue(Answers.sse(Answers.Ending.STALL, received, Answers.content("Hello")));
		HttpRequest request = HttpRequest.newBuilder(URI.create(this.server.baseUrl() + "/responses"))
			.timeout(Duration.ofSeconds(20))
			.header("Authorization", "Bearer " + CLIENT_KEY)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"stream\":true,\"input\":\"hi\"}"))
			.build();
		HttpResponse<Stream<String>> response = this.http.send(request, HttpResponse.BodyHandlers.ofLines());
		assertThat(response.statusCode()).isEqualTo(200);
		List<String> names = new ArrayList<>();
		try (Stream<String> lines = response.body()) {
			lines.forEach((line) -> {
				if (line.startsWith("event:")) {
					names.add(line.substring("event:".length()).strip());
				}
				if (line.contains("\"delta\":\"Hello\"")) {
					received.countDown();
				}
			});
		}
		assertThat(names.subList(names.size() - 2, names.size())).containsExactly("error", "response.failed");
	}

	private List<LlmEndpoint> breakers() {
		return List.copyOf(this.server.context().getBean(EndpointRegistry.class).endpoints());
	}

	private HttpResponse<String> post(String body, Map<String, String> headers) throws Exception {
		return this.server.post("/responses", CLIENT_KEY, body, headers);
	}

	static List<String> texts(Response response) {
		return response.output()
			.stream()
			.flatMap((item) -> item.message().stream())
			.flatMap((message) -> message.content().stream())
			.flatMap((content) -> content.outputText().stream())
			.map(ResponseOutputText::text)
			.toList();
	}

	private static String type(ResponseStreamEvent event) {
		Map<String, Boolean> types = new java.util.LinkedHashMap<>();
		types.put("response.created", event.isCreated());
		types.put("response.in_progress", event.isInProgress());
		types.put("response.output_item.added", event.isOutputItemAdded());
		types.put("response.content_part.added", event.isContentPartAdded());
		types.put("response.output_text.delta", event.isOutputTextDelta());
		types.put("response.output_text.done", event.isOutputTextDone());
		types.put("response.content_part.done", event.isContentPartDone());
		types.put("response.output_item.done", event.isOutputItemDone());
		types.put("response.completed", event.isCompleted());
		return types.entrySet().stream().filter(Map.Entry::getValue).map(Map.Entry::getKey).findFirst().orElse("other");
	}

	// What the provider received, less what a chat sent as a stream adds (stream, stream_options).
	private static JsonNode sentBody(RecordedRequest request) {
		ObjectNode body = (ObjectNode) mapper.readTree(request.getBody().utf8());
		body.remove("stream");
		body.remove("stream_options");
		return body;
	}

}
