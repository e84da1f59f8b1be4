package dev.llmresilience.protocol.openai;

import java.util.List;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Messages that agents send, on the wire: an assistant's tool calls sent back with their results,
 * content parts, tools and the tool choice. Each request is compared with the body an official
 * SDK sent (openai-dotnet's recorded session) or with the OpenAPI spec's example, so the provider
 * receives exactly what it documents.
 */
class ToolMessagesWireTests {

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private static final String WEATHER_SCHEMA = """
			{"type": "object", "properties": {"city_name": {"type": "string",
			 "description": "the name of a city, e.g. Johannesburg or Ho Chi Minh City."}}, "required": ["city_name"]}""";

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void toolRoundTripSendsWhatTheSdkSentAndReadsBothAnswers() throws Exception {
		JsonNode entries = mapper.readTree(fixture("openai/dotnet-record-parallel-tool-calls.json")).get("Entries");
		this.upstreams.primary().enqueue(json(200, mapper.writeValueAsString(entries.get(0).get("ResponseBody"))));
		this.upstreams.primary().enqueue(json(200, mapper.writeValueAsString(entries.get(1).get("ResponseBody"))));
		Tool weather = Tool.function("get_weather_for_city", "gets the current weather for a given city", WEATHER_SCHEMA);
		ChatRequest ask = ChatRequest.builder()
			.user("Tell me what's the current weather in the following cities: Santiago and Karachi.")
			.tool(weather)
			.build();
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.model=gpt-4o-mini").run((context) -> {
			ChatResponse first = chat(context, ask);
			assertThat(first.finishReason()).isEqualTo("tool_calls");
			assertThat(first.toolCalls()).containsExactly(
					new ToolCall("call_SKQEHo7QVlJRoCtEzcrYZM9C", "get_weather_for_city", "{\"city_name\": \"Santiago\"}"),
					new ToolCall("call_CkjljlLr7IebPc4hnvetfiZ8", "get_weather_for_city", "{\"city_name\": \"Karachi\"}"));
			ChatRequest answer = ask.toBuilder()
				.message(first.toMessage())
				.toolResult(first.toolCalls().get(0).id(), "get_weather_for_city", "rainy")
				.toolResult(first.toolCalls().get(1).id(), "get_weather_for_city", "sunny")
				.build();
			ChatResponse second = chat(context, answer);
			assertThat(second.content()).isEqualTo("The current weather is as follows:\n- Santiago: Rainy\n- Karachi: Sunny");
			assertThat(second.toolCalls()).isEmpty();
		});
		assertThat(sentBody(this.upstreams.primary().takeRequest())).isEqualTo(entries.get(0).get("RequestBody"));
		assertThat(sentBody(this.upstreams.primary().takeRequest())).isEqualTo(entries.get(1).get("RequestBody"));
	}

	@Test
	void contentPartsAreSentAsTheSpecsImageExample() throws Exception {
		this.upstreams.primary().enqueue(completion("A boardwalk."));
		ChatRequest request = ChatRequest.builder()
			.message(ChatMessage.user(List.of(ContentPart.text("What is in this image?"), ContentPart.imageUrl(
					"https://upload.wikimedia.org/wikipedia/commons/thumb/d/dd/Gfp-wisconsin-madison-the-nature-boardwalk.jpg/2560px-Gfp-wisconsin-madison-the-nature-boardwalk.jpg"))))
			.maxTokens(300)
			.build();
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.model=gpt-5.4").run((context) ->
				assertThat(chat(context, request).content()).isEqualTo("A boardwalk."));
		assertThat(sentBody(this.upstreams.primary().takeRequest()))
			.isEqualTo(mapper.readTree(fixture("openai/spec-request-image-input.derived.json")));
	}

	@Test
	void toolsAndToolChoiceAreSentAsTheSpecsFunctionsExample() throws Exception {
		this.upstreams.primary().enqueue(completion("Sunny."));
		ChatRequest request = ChatRequest.builder()
			.user("What is the weather like in Boston today?")
			.tool(Tool.function("get_current_weather", "Get the current weather in a given location", """
					{"type": "object", "properties": {
					  "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
					  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["location"]}"""))
			.toolChoice(ToolChoice.auto())
			.build();
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.model=gpt-5.4").run((context) ->
				assertThat(chat(context, request).content()).isEqualTo("Sunny."));
		assertThat(sentBody(this.upstreams.primary().takeRequest()))
			.isEqualTo(mapper.readTree(fixture("openai/spec-request-functions.derived.json")));
	}

	@Test
	void aNamedToolChoiceAndAStrictToolAreSentAsObjects() throws Exception {
		this.upstreams.primary().enqueue(completion("ok"));
		ChatRequest request = ChatRequest.builder()
			.user("hi")
			.tool(new Tool("lookup", null, "{\"type\":\"object\",\"properties\":{}}", true))
			.toolChoice(ToolChoice.function("lookup"))
			.build();
		this.upstreams.runner().run((context) -> chat(context, request));
		JsonNode body = sentBody(this.upstreams.primary().takeRequest());
		assertThat(body.get("tool_choice")).isEqualTo(mapper.readTree("{\"type\":\"function\",\"function\":{\"name\":\"lookup\"}}"));
		assertThat(body.get("tools").get(0)).isEqualTo(mapper.readTree(
				"{\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"parameters\":{\"type\":\"object\",\"properties\":{}},\"strict\":true}}"));
	}

	@Test
	void toolsInExtraAreRefusedNowThatTheyAreFieldsAndNothingIsSent() {
		for (String field : List.of("tools", "tool_choice", " Tools ")) {
			ChatRequest request = ChatRequest.builder().user("hi").extra(field, List.of()).build();
			this.upstreams.runner().run((context) -> {
				Throwable error = catchThrowable(() -> chat(context, request));
				assertThat(error).isInstanceOf(LlmInvalidRequestException.class).hasMessageContaining("ChatRequest.builder().tool");
				assertThat(((LlmInvalidRequestException) error).code()).isEqualTo(ReservedFields.ERROR_CODE);
			});
		}
		assertThat(this.upstreams.primary().getRequestCount()).isZero();
	}

	@Test
	void toolParametersThatAreNotJsonAreTheCallersErrorAndNothingIsSent() {
		ChatRequest request = ChatRequest.builder().user("hi").tool(Tool.function("lookup", null, "{not json")).build();
		this.upstreams.runner().run((context) -> {
			Throwable error = catchThrowable(() -> chat(context, request));
			assertThat(error).isInstanceOf(LlmInvalidRequestException.class)
				.hasMessageContaining("tool 'lookup'");
			assertThat(((LlmInvalidRequestException) error).code()).isEqualTo("invalid_tool_parameters");
		});
		assertThat(this.upstreams.primary().getRequestCount()).isZero();
		assertThat(this.upstreams.backup().getRequestCount()).isZero();
	}

	// What the provider received, less what a chat sent as a stream adds (stream, stream_options).
	private static JsonNode sentBody(RecordedRequest request) {
		ObjectNode body = (ObjectNode) mapper.readTree(request.getBody().utf8());
		body.remove("stream");
		body.remove("stream_options");
		return body;
	}

}
