package dev.llmresilience.openaiapi;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.errors.InternalServerException;
import com.openai.errors.NotFoundException;
import com.openai.errors.SseException;
import com.openai.errors.UnauthorizedException;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import com.openai.models.models.Model;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import org.springframework.boot.WebApplicationType;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The OpenAI-compatible API as its clients see it, through the official OpenAI Java SDK (with its
 * own retries off, so that each test sees one request) and, for the framing, through plain HTTP:
 * chat, streams, tool calls, authentication, unknown models, busy answers, broken streams and
 * refused bodies. Run once against a WebFlux application and once against a Servlet one.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class OpenAiApiContract {

	static final String CLIENT_KEY = "client-key-0123456789abcdef";

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
				"llm.openai-api.max-request-size=2KB",
				"llm.endpoints.primary.base-url=" + this.upstreams.primary().url("/v1"),
				"llm.endpoints.primary.model=gpt-4o-mini", "llm.endpoints.primary.api-key=" + FakeUpstream.PRIMARY_KEY,
				"llm.endpoints.backup.base-url=" + this.upstreams.backup().url("/v1"),
				"llm.endpoints.backup.model=backup-model", "llm.endpoints.backup.priority=1", "llm.routes.cheap=backup",
				"llm.defaults.retry.max-attempts=1");
		this.client = OpenAIOkHttpClient.builder().baseUrl(this.server.baseUrl()).apiKey(CLIENT_KEY).maxRetries(0).build();
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
	void chatAnswersThroughTheGatewayWithTierEndpointAndRequestIdHeaders() throws Exception {
		this.upstreams.primary().enqueue(json(200, fixture("openai/spec-chat-completion-default.json")));
		HttpResponseFor<ChatCompletion> response = this.client.chat()
			.completions()
			.withRawResponse()
			.create(ChatCompletionCreateParams.builder().model("default").addUserMessage("Hello!").build());
		ChatCompletion completion = response.parse();
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().values("x-llm-tier")).containsExactly("PRIMARY");
		assertThat(response.headers().values("x-llm-endpoint")).containsExactly("primary");
		assertThat(response.headers().values("x-request-id")).singleElement().asString().isNotBlank();
		assertThat(completion.choices().get(0).message().content()).hasValue("Hello! How can I assist you today?");
		assertThat(completion.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
		assertThat(completion.model()).isEqualTo("gpt-5.4");
		assertThat(completion.usage().get().totalTokens()).isEqualTo(29);
		RecordedRequest upstream = this.upstreams.primary().takeRequest();
		assertThat(upstream.getHeaders().get("Authorization")).isEqualTo("Bearer " + FakeUpstream.PRIMARY_KEY);
		assertThat(mapper.readTree(upstream.getBody().utf8()).get("model").asString()).isEqualTo("gpt-4o-mini");
	}

	@Test
	void streamReplaysTheAnswerAndEndsWithTheUsageChunk() {
		this.upstreams.primary().enqueue(Answers.sse(Answers.streamFixture("pysdk-stream-basic-stop-usage.sse")));
		ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
			.model("default")
			.addUserMessage("What's the weather like in SF?")
			.streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
			.build();
		StringBuilder text = new StringBuilder();
		List<ChatCompletionChunk> chunks = new ArrayList<>();
		try (StreamResponse<ChatCompletionChunk> stream = this.client.chat().completions().createStreaming(params)) {
			stream.stream().forEach((chunk) -> {
				chunks.add(chunk);
				chunk.choices().forEach((choice) -> choice.delta().content().ifPresent(text::append));
			});
		}
		assertThat(text).hasToString("I'm unable to provide real-time weather updates. To get the current weather in "
				+ "San Francisco, I recommend checking a reliable weather website or a weather app.");
		assertThat(chunks.get(0).choices().get(0).delta().role()).isPresent();
		assertThat(chunks.stream().flatMap((chunk) -> chunk.choices().stream()).map((choice) -> choice.finishReason())
			.flatMap(java.util.Optional::stream)).containsExactly(ChatCompletionChunk.Choice.FinishReason.STOP);
		ChatCompletionChunk last = chunks.get(chunks.size() - 1);
		assertThat(last.choices()).isEmpty();
		assertThat(last.usage().get().promptTokens()).isEqualTo(14);
		assertThat(last.usage().get().completionTokens()).isEqualTo(30);
	}

	@Test
	void streamAskingForUsageLeavesUsageOutWhenTheProviderReportedNone() throws Exception {
		String withoutUsage = Stream.of(Answers.streamFixture("pysdk-stream-basic-stop-usage.sse").split("\n\n"))
			.filter((event) -> !event.contains("\"usage\":{"))
			.collect(java.util.stream.Collectors.joining("\n\n", "", "\n\n"));
		this.upstreams.primary().enqueue(Answers.sse(withoutUsage));
		HttpResponse<String> response = post("{\"model\":\"default\",\"stream\":true,\"stream_options\":{\"include_usage\":true},"
				+ "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", Map.of());
		assertThat(response.statusCode()).isEqualTo(200);
		List<String> events = Stream.of(response.body().split("\n\n")).map(String::strip).filter((e) -> !e.isEmpty()).toList();
		assertThat(events.get(events.size() - 1)).matches("data: ?\\[DONE\\]");
		JsonNode usageChunk = mapper.readTree(events.get(events.size() - 2).replaceFirst("^data: ?", ""));
		assertThat(usageChunk.get("choices").isEmpty()).as("the usage chunk has no choices").isTrue();
		assertThat(usageChunk.has("usage")).as("no usage invented: the provider sent none").isFalse();
		assertThat(events).noneMatch((event) -> event.contains("\"usage\""));
	}

	@Test
	void streamIsFramedAsServerSentEventsEndingWithDone() throws Exception {
		this.upstreams.primary().enqueue(Answers.sse(Answers.streamFixture("pysdk-stream-basic-stop-usage.sse")));
		HttpResponse<String> response = post("{\"model\":\"default\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
				Map.of("x-request-id", "req-42"));
		assertThat(response.statusCode()).isEqualTo(200);
		assertThat(response.headers().firstValue("content-type")).hasValueSatisfying((type) -> assertThat(type).startsWith("text/event-stream"));
		assertThat(response.headers().firstValue("x-request-id")).hasValue("req-42");
		assertThat(response.headers().firstValue("x-llm-tier")).hasValue("PRIMARY");
		List<String> events = Stream.of(response.body().split("\n\n")).map(String::strip).filter((e) -> !e.isEmpty()).toList();
		assertThat(events).allSatisfy((event) -> assertThat(event).matches("data: ?.*"));
		assertThat(events.get(events.size() - 1)).matches("data: ?\\[DONE\\]");
		assertThat(events.get(events.size() - 2)).contains("\"finish_reason\":\"stop\"");
	}

	@Test
	void toolRoundTripThroughTheSdkReachesTheProviderAsTheSdkWouldSendIt() throws Exception {
		JsonNode entries = mapper.readTree(fixture("openai/dotnet-record-parallel-tool-calls.json")).get("Entries");
		this.upstreams.primary().enqueue(json(200, mapper.writeValueAsString(entries.get(0).get("ResponseBody"))));
		this.upstreams.primary().enqueue(json(200, mapper.writeValueAsString(entries.get(1).get("ResponseBody"))));
		FunctionDefinition weather = FunctionDefinition.builder()
			.name("get_weather_for_city")
			.description("gets the current weather for a given city")
			.parameters(FunctionParameters.builder()
				.putAdditionalProperty("type", JsonValue.from("object"))
				.putAdditionalProperty("properties", JsonValue.from(Map.of("city_name", Map.of("type", "string",
						"description", "the name of a city, e.g. Johannesburg or Ho Chi Minh City."))))
				.putAdditionalProperty("required", JsonValue.from(List.of("city_name")))
				.build())
			.build();
		ChatCompletionCreateParams.Builder ask = ChatCompletionCreateParams.builder()
			.model("default")
			.addUserMessage("Tell me what's the current weather in the following cities: Santiago and Karachi.")
			.addFunctionTool(weather);
		ChatCompletion first = this.client.chat().completions().create(ask.build());
		assertThat(first.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
		List<ChatCompletionMessageToolCall> calls = first.choices().get(0).message().toolCalls().get();
		assertThat(calls).extracting((call) -> call.function().get().function().arguments())
			.containsExactly("{\"city_name\": \"Santiago\"}", "{\"city_name\": \"Karachi\"}");
		ask.addMessage(first.choices().get(0).message());
		List<String> weathers = List.of("rainy", "sunny");
		for (int i = 0; i < calls.size(); i++) {
			ask.addMessage(ChatCompletionToolMessageParam.builder()
				.toolCallId(calls.get(i).function().get().id())
				.content(weathers.get(i))
				.build());
		}
		ChatCompletion second = this.client.chat().completions().create(ask.build());
		assertThat(second.choices().get(0).message().content())
			.hasValue("The current weather is as follows:\n- Santiago: Rainy\n- Karachi: Sunny");
		assertThat(sentBody(this.upstreams.primary().takeRequest())).isEqualTo(entries.get(0).get("RequestBody"));
		assertThat(sentBody(this.upstreams.primary().takeRequest())).isEqualTo(entries.get(1).get("RequestBody"));
	}

	@Test
	void streamedToolCallsAccumulateInTheSdk() {
		this.upstreams.primary().enqueue(Answers.sse(Answers.streamFixture("pysdk-stream-parallel-tool-calls.sse")));
		ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
		try (StreamResponse<ChatCompletionChunk> stream = this.client.chat().completions().createStreaming(
				ChatCompletionCreateParams.builder().model("default").addUserMessage("Weather and AAPL?").build())) {
			stream.stream().forEach(accumulator::accumulate);
		}
		ChatCompletion completion = accumulator.chatCompletion();
		List<ChatCompletionMessageToolCall> calls = completion.choices().get(0).message().toolCalls().get();
		assertThat(calls).extracting((call) -> call.function().get().id())
			.containsExactly("call_JMW1whyEaYG438VE1OIflxA2", "call_DNYTawLBoN8fj3KN6qU9N1Ou");
		assertThat(calls).extracting((call) -> call.function().get().function().name())
			.containsExactly("GetWeatherArgs", "get_stock_price");
		assertThat(calls).extracting((call) -> call.function().get().function().arguments())
			.containsExactly("{\"city\": \"Edinburgh\", \"country\": \"GB\", \"units\": \"c\"}",
					"{\"ticker\": \"AAPL\", \"exchange\": \"NASDAQ\"}");
		assertThat(completion.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
	}

	@Test
	void aWrongKeyIsRefusedWith401AndNothingGoesUpstream() {
		int before = this.upstreams.primary().getRequestCount();
		OpenAIClient stranger = OpenAIOkHttpClient.builder().baseUrl(this.server.baseUrl()).apiKey("sk-not-a-client-key")
			.maxRetries(0).build();
		try {
			UnauthorizedException error = catchThrowableOfType(UnauthorizedException.class, () -> stranger.chat()
				.completions()
				.create(ChatCompletionCreateParams.builder().model("default").addUserMessage("hi").build()));
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
		NotFoundException error = catchThrowableOfType(NotFoundException.class, () -> this.client.chat()
			.completions()
			.create(ChatCompletionCreateParams.builder().model("gpt-9").addUserMessage("hi").build()));
		assertThat(error.statusCode()).isEqualTo(404);
		assertThat(error.code()).hasValue("model_not_found");
		assertThat(error.getMessage()).contains("gpt-9").contains("default").contains("cheap");
	}

	@Test
	void busyIs503WithRetryAfterFromWhenTheNextBreakerMayLetCallsThrough() {
		long opened = System.nanoTime();
		breakers().forEach((endpoint) -> endpoint.circuitBreaker().transitionToOpenState());
		int before = this.upstreams.primary().getRequestCount() + this.upstreams.backup().getRequestCount();
		InternalServerException error = catchThrowableOfType(InternalServerException.class, () -> this.client.chat()
			.completions()
			.create(ChatCompletionCreateParams.builder().model("default").addUserMessage("hi").build()));
		assertThat(error.statusCode()).isEqualTo(503);
		assertThat(error.code()).hasValue("llm_busy");
		assertThat(error.body().toString()).contains("service_unavailable");
		assertThat(error.headers().values("x-should-retry")).containsExactly("true");
		assertThat(error.headers().values("x-llm-tier")).containsExactly("BUSY");
		// both breakers opened just before the call, with the built-in wait-duration-in-open-state of
		// 30s: what is left of it, less no more than the time the call took (1 ms of rounding)
		long elapsed = Duration.ofNanos(System.nanoTime() - opened).toMillis();
		long millis = Long.parseLong(error.headers().values("retry-after-ms").get(0));
		assertThat(millis).isBetween(30_000L - elapsed - 1, 30_000L);
		long seconds = Long.parseLong(error.headers().values("retry-after").get(0));
		assertThat(seconds).isEqualTo((millis + 999) / 1000);
		assertThat(error.body().toString()).as("the message says the wait retry-after gives")
			.contains("No endpoint of route 'default' can answer now. Try again in " + seconds
					+ " seconds (retry-after), when its next circuit breaker lets a call through.");
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
			InternalServerException error = catchThrowableOfType(InternalServerException.class, () -> retrying.chat()
				.completions()
				.create(ChatCompletionCreateParams.builder().model("default").addUserMessage("hi").build()));
			assertThat(error.statusCode()).isEqualTo(503);
			assertThat(error.headers().values("x-should-retry")).containsExactly("false");
			assertThat(error.headers().values("retry-after")).isEmpty();
		}
		finally {
			retrying.close();
		}
		assertThat(busy.count() - before).isEqualTo(1);
	}

	@Test
	void aStreamThatBreaksAfterItStartedEndsWithAnErrorEventTheSdkRaises() throws Exception {
		// the upstream sends two chunks and holds; once the client has them, the upstream's connection
		// is cut (a cut sent with the chunks could take them with it, before the client read them)
		CountDownLatch received = new CountDownLatch(1);
		this.upstreams.primary().enqueue(Answers.sse(Answers.Ending.STALL, received,
				Answers.content("Hello"), Answers.content(" wor")));
		StringBuilder text = new StringBuilder();
		SseException error;
		try (StreamResponse<ChatCompletionChunk> stream = this.client.chat().completions().createStreaming(
				ChatCompletionCreateParams.builder().model("default").addUserMessage("hi").build())) {
			error = catchThrowableOfType(SseException.class, () -> stream.stream().forEach((chunk) -> {
				chunk.choices().forEach((choice) -> choice.delta().content().ifPresent(text::append));
				if (text.toString().equals("Hello wor")) {
					received.countDown();
				}
			}));
		}
		assertThat(text).hasToString("Hello wor");
		assertThat(error.code()).hasValue("stream_interrupted");
		assertThat(error.getMessage()).contains("broke off after it had started");
	}

	@Test
	void aBrokenStreamsLastEventIsTheErrorAndThereIsNoDone() throws Exception {
		CountDownLatch received = new CountDownLatch(1);
		this.upstreams.primary().enqueue(Answers.sse(Answers.Ending.STALL, received,
				Answers.content("Hello")));
		HttpRequest request = HttpRequest.newBuilder(URI.create(this.server.baseUrl() + "/chat/completions"))
			.timeout(Duration.ofSeconds(20))
			.header("Authorization", "Bearer " + CLIENT_KEY)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
			.build();
		HttpResponse<Stream<String>> response = this.http.send(request, HttpResponse.BodyHandlers.ofLines());
		assertThat(response.statusCode()).isEqualTo(200);
		List<String> data = new ArrayList<>();
		try (Stream<String> lines = response.body()) {
			lines.filter((line) -> line.startsWith("data:")).forEach((line) -> {
				data.add(line);
				if (line.contains("Hello")) {
					received.countDown();
				}
			});
		}
		assertThat(data.get(data.size() - 1)).contains("\"code\":\"stream_interrupted\"").contains("\"type\":\"server_error\"");
		assertThat(data).noneMatch((line) -> line.contains("[DONE]"));
	}

	@Test
	void aBodyOverTheConfiguredSizeIsRefusedWith413() throws Exception {
		String big = "x".repeat(3000);
		HttpResponse<String> response = post("{\"messages\":[{\"role\":\"user\",\"content\":\"" + big + "\"}]}", Map.of());
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(mapper.readTree(response.body()).get("error").get("code").asString()).isEqualTo("request_too_large");
	}

	@Test
	void aBodyOfUndeclaredLengthIsRefusedWith413OnceItPassesTheConfiguredSize() throws Exception {
		// no Content-Length: only the read itself can stop at the limit; read whole, the unknown model would be a 404
		String big = "{\"model\":\"gpt-9\",\"messages\":[{\"role\":\"user\",\"content\":\"" + "x".repeat(3000) + "\"}]}";
		int before = this.upstreams.primary().getRequestCount() + this.upstreams.backup().getRequestCount();
		HttpRequest request = HttpRequest.newBuilder(URI.create(this.server.baseUrl() + "/chat/completions"))
			.version(HttpClient.Version.HTTP_1_1)
			.timeout(Duration.ofSeconds(60))
			.header("Authorization", "Bearer " + CLIENT_KEY)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofString(big)))
			.build();
		HttpResponse<String> response = this.http.send(request, HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).isEqualTo(413);
		assertThat(mapper.readTree(response.body()).get("error").get("code").asString()).isEqualTo("request_too_large");
		assertThat(this.upstreams.primary().getRequestCount() + this.upstreams.backup().getRequestCount())
			.isEqualTo(before);
	}

	@Test
	void aBodyThatIsNotARequestIs400NamingTheField() throws Exception {
		HttpResponse<String> response = post("{\"model\":\"default\",\"messages\":[]}", Map.of());
		assertThat(response.statusCode()).isEqualTo(400);
		JsonNode error = mapper.readTree(response.body()).get("error");
		assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
		assertThat(error.get("param").asString()).isEqualTo("messages");
		assertThat(response.headers().firstValue("x-should-retry")).hasValue("false");
		assertThat(post("not json", Map.of()).statusCode()).isEqualTo(400);
	}

	@Test
	void aNamedRouteIsServedByItsEndpoints() {
		this.upstreams.backup().enqueue(completion("from backup"));
		HttpResponseFor<ChatCompletion> response = this.client.chat()
			.completions()
			.withRawResponse()
			.create(ChatCompletionCreateParams.builder().model("cheap").addUserMessage("hi").build());
		assertThat(response.parse().choices().get(0).message().content()).hasValue("from backup");
		assertThat(response.headers().values("x-llm-endpoint")).containsExactly("backup");
	}

	@Test
	void modelsListsTheRoutes() {
		assertThat(this.client.models().list().data()).extracting(Model::id).containsExactlyInAnyOrder("default", "cheap");
	}

	private List<LlmEndpoint> breakers() {
		return List.copyOf(this.server.context().getBean(EndpointRegistry.class).endpoints());
	}

	private HttpResponse<String> post(String body, Map<String, String> headers) throws Exception {
		return this.server.postChat(CLIENT_KEY, body, headers);
	}

	// What the provider received, less what a chat sent as a stream adds (stream, stream_options).
	private static JsonNode sentBody(RecordedRequest request) {
		ObjectNode body = (ObjectNode) mapper.readTree(request.getBody().utf8());
		body.remove("stream");
		body.remove("stream_options");
		return body;
	}

}
