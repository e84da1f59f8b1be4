package dev.llmresilience.openaiapi;

import java.util.List;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tool;
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
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a client of the OpenAI-compatible API sends reaches an OpenAI provider unchanged: each body
 * (the OpenAPI spec's examples, an official SDK's recorded tool round trip) is read by the serving
 * codec, sent through the gateway, and compared with the body the provider received.
 */
class ServedRequestsForwardedUnchangedTests {

	private static final JsonMapper mapper = JsonMapper.builder().build();

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
	void specRequestsReadByTheApiCodecReachTheProviderUnchanged() throws Exception {
		for (String name : List.of("spec-request-default.derived.json", "spec-request-image-input.derived.json",
				"spec-request-functions.derived.json")) {
			String text = fixture("openai/" + name);
			JsonNode original = mapper.readTree(text);
			assertThat(forwarded(text.getBytes(), original.get("model").asString())).as(name).isEqualTo(original);
		}
	}

	@Test
	void recordedToolRoundTripReadByTheApiCodecReachesTheProviderUnchanged() throws Exception {
		JsonNode entries = mapper.readTree(fixture("openai/dotnet-record-parallel-tool-calls.json")).get("Entries");
		JsonNode recorded = entries.get(1).get("RequestBody");
		byte[] body = mapper.writeValueAsBytes(recorded);
		OpenAiApiRequest read = new OpenAiApiCodec().read(body);
		List<ChatMessage> messages = read.request().messages();
		assertThat(messages).extracting(ChatMessage::role).containsExactly("user", "assistant", "tool", "tool");
		assertThat(messages.get(1).content()).isNull();
		assertThat(messages.get(1).toolCalls()).hasSize(2);
		assertThat(messages.get(2).toolCallId()).isEqualTo("call_SKQEHo7QVlJRoCtEzcrYZM9C");
		assertThat(read.request().tools()).extracting(Tool::name).containsExactly("get_weather_for_city");
		assertThat(forwarded(body, "gpt-4o-mini")).isEqualTo(recorded);
	}

	private JsonNode forwarded(byte[] body, String model) throws InterruptedException {
		// the body's model names a route on the API; here the endpoint's model stands for it
		ChatRequest request = new OpenAiApiCodec().read(body).request().toBuilder().route(null).build();
		this.upstreams.primary().enqueue(completion("ok"));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.model=" + model)
			.run((context) -> chat(context, request));
		return sentBody(this.upstreams.primary().takeRequest());
	}

	// What the provider received, less what a chat sent as a stream adds (stream, stream_options).
	private static JsonNode sentBody(RecordedRequest request) {
		ObjectNode body = (ObjectNode) mapper.readTree(request.getBody().utf8());
		body.remove("stream");
		body.remove("stream_options");
		return body;
	}

}
