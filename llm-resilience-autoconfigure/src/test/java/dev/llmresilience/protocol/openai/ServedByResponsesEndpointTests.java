package dev.llmresilience.protocol.openai;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ResponseAccumulator;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseOutputText;
import com.openai.models.responses.ResponseStatus;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.Wire;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.Answers.sse;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The served APIs answered by an {@code openai-responses} endpoint, as the official OpenAI Java SDK
 * sees them from a whole WebFlux application: the Responses API's recorded answer, stream and
 * function call come out as chat completions, chunks and tool calls, and a served Responses
 * request goes to it as Responses input and comes back as a response object and its events.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ServedByResponsesEndpointTests {

	private static final String CLIENT_KEY = "client-key-0123456789abcdef";

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private FakeUpstream upstreams;

	private ConfigurableApplicationContext application;

	private OpenAIClient client;

	@BeforeAll
	void startApplication() {
		this.upstreams = FakeUpstream.start(Wire.OPENAI_RESPONSES);
		List<String> args = new ArrayList<>(List.of("--server.port=0", "--spring.main.web-application-type=reactive",
				"--llm.openai-api.enabled=true", "--llm.openai-api.api-keys=" + CLIENT_KEY,
				"--llm.defaults.retry.max-attempts=1"));
		for (String property : this.upstreams.properties()) {
			args.add("--" + property);
		}
		this.application = new SpringApplicationBuilder(App.class).run(args.toArray(String[]::new));
		String port = this.application.getEnvironment().getRequiredProperty("local.server.port");
		this.client = OpenAIOkHttpClient.builder()
			.baseUrl("http://localhost:" + port + "/v1")
			.apiKey(CLIENT_KEY)
			.maxRetries(0)
			.build();
	}

	// the tests share the upstream: each reads only the requests it made
	@BeforeEach
	void forgetEarlierRequests() throws InterruptedException {
		while (this.upstreams.primary().takeRequest(0, TimeUnit.MILLISECONDS) != null) {
			// drained
		}
	}

	@AfterAll
	void stopApplication() {
		this.client.close();
		this.application.close();
		this.upstreams.close();
	}

	@Test
	void chatCompletionIsAnsweredFromTheResponsesApi() throws Exception {
		this.upstreams.primary().enqueue(json(200, fixture("openai-responses/pysdk-response-output-text.derived.json")));
		HttpResponseFor<ChatCompletion> response = this.client.chat()
			.completions()
			.withRawResponse()
			.create(ChatCompletionCreateParams.builder()
				.model("default")
				.addSystemMessage("Be brief.")
				.addUserMessage("What's the weather like in SF?")
				.maxCompletionTokens(100)
				.build());
		ChatCompletion completion = response.parse();
		assertThat(response.headers().values("x-llm-endpoint")).containsExactly("primary");
		assertThat(completion.choices().get(0).message().content().orElseThrow())
			.startsWith("I can't provide real-time updates");
		assertThat(completion.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
		assertThat(completion.usage().orElseThrow().promptTokens()).isEqualTo(14);
		assertThat(completion.usage().orElseThrow().completionTokens()).isEqualTo(50);
		RecordedRequest upstream = this.upstreams.primary().takeRequest();
		assertThat(upstream.getUrl().encodedPath()).isEqualTo("/v1/responses");
		JsonNode body = mapper.readTree(upstream.getBody().utf8());
		assertThat(body.get("store").asBoolean(true)).isFalse();
		assertThat(body.get("input").get(0).get("role").asString()).isEqualTo("system");
		assertThat(body.get("input").get(1).get("content").asString()).isEqualTo("What's the weather like in SF?");
	}

	@Test
	void chatCompletionStreamIsTheResponsesStreamWithItsUsage() {
		this.upstreams.primary().enqueue(sse(fixture("openai-responses/spec-responses-streaming.derived.sse")));
		ChatCompletionCreateParams params = ChatCompletionCreateParams.builder()
			.model("default")
			.addUserMessage("Hello!")
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
		assertThat(text).hasToString("Hi");
		assertThat(chunks).flatMap(ChatCompletionChunk::choices)
			.filteredOn((choice) -> choice.finishReason().isPresent())
			.singleElement()
			.satisfies((choice) -> assertThat(choice.finishReason().get())
				.isEqualTo(ChatCompletionChunk.Choice.FinishReason.STOP));
		assertThat(chunks.get(chunks.size() - 1).usage().orElseThrow().totalTokens()).isEqualTo(48);
	}

	@Test
	void functionCallOfTheResponsesApiIsAToolCallOfTheChatCompletion() {
		this.upstreams.primary().enqueue(sse(fixture("openai-responses/composed-stream-function-call.sse")));
		FunctionDefinition weather = FunctionDefinition.builder()
			.name("get_current_weather")
			.parameters(FunctionParameters.builder()
				.putAdditionalProperty("type", JsonValue.from("object"))
				.putAdditionalProperty("properties", JsonValue.from(Map.of()))
				.build())
			.build();
		ChatCompletion completion = this.client.chat()
			.completions()
			.create(ChatCompletionCreateParams.builder()
				.model("default")
				.addUserMessage("Weather in Boston?")
				.addFunctionTool(weather)
				.build());
		ChatCompletion.Choice choice = completion.choices().get(0);
		assertThat(choice.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
		List<ChatCompletionMessageToolCall> calls = choice.message().toolCalls().orElseThrow();
		assertThat(calls).singleElement().satisfies((call) -> {
			assertThat(call.function().get().id()).isEqualTo("call_unLAR8MvFNptuiZK6K6HCy5k");
			assertThat(call.function().get().function().name()).isEqualTo("get_current_weather");
			assertThat(call.function().get().function().arguments())
				.isEqualTo("{\"location\":\"Boston, MA\",\"unit\":\"celsius\"}");
		});
	}

	@Test
	void aServedResponsesRequestIsAnsweredByTheResponsesApi() throws Exception {
		this.upstreams.primary().enqueue(json(200, fixture("openai-responses/pysdk-response-output-text.derived.json")));
		HttpResponseFor<Response> raw = this.client.responses()
			.withRawResponse()
			.create(ResponseCreateParams.builder()
				.model("default")
				.instructions("Be brief.")
				.input("What's the weather like in SF?")
				.maxOutputTokens(100)
				.topP(0.5)
				.build());
		Response response = raw.parse();
		assertThat(raw.headers().values("x-llm-endpoint")).containsExactly("primary");
		assertThat(response.status()).hasValue(ResponseStatus.COMPLETED);
		assertThat(texts(response)).singleElement().asString().startsWith("I can't provide real-time updates");
		assertThat(response.usage().get().inputTokens()).isEqualTo(14);
		assertThat(response.usage().get().outputTokens()).isEqualTo(50);
		RecordedRequest upstream = this.upstreams.primary().takeRequest();
		assertThat(upstream.getUrl().encodedPath()).isEqualTo("/v1/responses");
		JsonNode body = mapper.readTree(upstream.getBody().utf8());
		assertThat(body.get("store").asBoolean(true)).isFalse();
		assertThat(body.get("input").get(0).get("role").asString()).isEqualTo("system");
		assertThat(body.get("input").get(0).get("content").asString()).isEqualTo("Be brief.");
		assertThat(body.get("input").get(1).get("content").asString()).isEqualTo("What's the weather like in SF?");
		assertThat(body.get("max_output_tokens").asInt()).isEqualTo(100);
		assertThat(body.get("top_p").asDouble()).isEqualTo(0.5);
	}

	@Test
	void aServedResponsesStreamIsTheResponsesStreamOfTheEndpoint() {
		this.upstreams.primary().enqueue(sse(fixture("openai-responses/spec-responses-streaming.derived.sse")));
		ResponseAccumulator accumulator = ResponseAccumulator.create();
		StringBuilder deltas = new StringBuilder();
		try (StreamResponse<ResponseStreamEvent> stream = this.client.responses()
			.createStreaming(ResponseCreateParams.builder().model("default").input("Hello!").build())) {
			stream.stream().forEach((event) -> {
				accumulator.accumulate(event);
				event.outputTextDelta().ifPresent((delta) -> deltas.append(delta.delta()));
			});
		}
		assertThat(deltas).hasToString("Hi");
		Response response = accumulator.response();
		assertThat(response.status()).hasValue(ResponseStatus.COMPLETED);
		assertThat(texts(response)).containsExactly("Hi");
		assertThat(response.usage().get().totalTokens()).isEqualTo(48);
	}

	private static List<String> texts(Response response) {
		return response.output()
			.stream()
			.flatMap((item) -> item.message().stream())
			.flatMap((message) -> message.content().stream())
			.flatMap((content) -> content.outputText().stream())
			.map(ResponseOutputText::text)
			.toList();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

	}

}
