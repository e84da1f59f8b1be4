package dev.llmresilience.openaiapi;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;

import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Request bodies the official SDKs sent to {@code POST /v1/responses} (openai-dotnet's recorded
 * sessions, openai-node's test bodies; see {@code fixtures/responses/README.md}), posted byte for
 * byte: what each must get back, and what reaches the provider, a chat-completions endpoint.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ResponsesSdkRequestsTests {

	private static final String CLIENT_KEY = OpenAiApiContract.CLIENT_KEY;

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private FakeUpstream upstreams;

	private ApiServer server;

	@BeforeAll
	void startApplication() {
		this.upstreams = FakeUpstream.start();
		this.server = ApiServer.start(WebApplicationType.REACTIVE, "llm.openai-api.enabled=true",
				"llm.openai-api.api-keys=" + CLIENT_KEY,
				"llm.endpoints.primary.base-url=" + this.upstreams.primary().url("/v1"),
				"llm.endpoints.primary.model=gpt-4o-mini", "llm.endpoints.primary.api-key=" + FakeUpstream.PRIMARY_KEY,
				// the SDKs' model names, as routes
				"llm.routes.gpt-4o-mini=primary", "llm.routes.gpt-4o=primary", "llm.defaults.retry.max-attempts=1");
	}

	@BeforeEach
	void forgetEarlierRequests() throws InterruptedException {
		while (this.upstreams.primary().takeRequest(0, java.util.concurrent.TimeUnit.SECONDS) != null) {
			// a request an earlier test did not look at
		}
	}

	@AfterAll
	void stopApplication() {
		this.server.close();
		this.upstreams.close();
	}

	@Test
	void dotnetMessageHistoryGoesUpstreamAsTheConversation() throws Exception {
		this.upstreams.primary().enqueue(Answers.completion("Your name is Bob."));
		JsonNode body = ok(post("dotnet-request-message-history.derived.json"));
		assertThat(body.get("object").asString()).isEqualTo("response");
		assertThat(body.get("status").asString()).isEqualTo("completed");
		assertThat(text(body)).isEqualTo("Your name is Bob.");
		JsonNode messages = sent().get("messages");
		assertThat(messages.valueStream().map((message) -> message.get("role").asString()))
			.containsExactly("developer", "user", "assistant", "user");
		assertThat(messages.get(0).get("content")).isEqualTo(mapper.readTree(
				"[{\"type\":\"text\",\"text\":\"You are a helpful assistant.\"}]"));
		assertThat(messages.get(2).get("content").asString()).isEqualTo("Hello, Bob. It's a nice, sunny day!");
		assertThat(messages.get(3).get("content").get(0).get("text").asString())
			.isEqualTo("What's my name and what did you tell me the weather was like?");
	}

	@Test
	void dotnetInstructionsAreTheSystemMessageAndAreRepeatedInTheResponse() throws Exception {
		this.upstreams.primary().enqueue(Answers.completion("Arr, matey, hello!"));
		JsonNode body = ok(post("dotnet-request-instructions.derived.json"));
		assertThat(body.get("instructions").asString()).isEqualTo("Always begin your replies with 'Arr, matey'");
		JsonNode first = sent().get("messages").get(0);
		assertThat(first.get("role").asString()).isEqualTo("system");
		assertThat(first.get("content").asString()).isEqualTo("Always begin your replies with 'Arr, matey'");
	}

	@Test
	void dotnetStoreFalseIsServed() throws Exception {
		this.upstreams.primary().enqueue(Answers.completion("Hello!"));
		JsonNode body = ok(post("dotnet-request-store-false.derived.json"));
		assertThat(body.get("store").asBoolean()).isFalse();
		assertThat(sent().has("store")).isFalse();
	}

	@Test
	void dotnetMaxOutputTokensIsTheProvidersMaxTokensAndALengthCutIsIncomplete() throws Exception {
		this.upstreams.primary().enqueue(json(200, Answers.completionBody("Mango sun").replace("\"stop\"", "\"length\"")));
		JsonNode body = ok(post("dotnet-request-max-output-tokens.derived.json"));
		assertThat(body.get("status").asString()).isEqualTo("incomplete");
		assertThat(body.get("incomplete_details").get("reason").asString()).isEqualTo("max_output_tokens");
		assertThat(body.get("max_output_tokens").asInt()).isEqualTo(20);
		assertThat(sent().get("max_tokens").asInt()).isEqualTo(20);
	}

	@Test
	void dotnetStreamIsAnsweredWithTheResponseEvents() throws Exception {
		this.upstreams.primary().enqueue(Answers.sse(Answers.stream("Hello", ", world")));
		HttpResponse<String> response = post("dotnet-request-stream.derived.json");
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		List<JsonNode> events = Stream.of(response.body().split("\n\n"))
			.map(String::strip)
			.filter((event) -> !event.isEmpty())
			.map((event) -> mapper.readTree(event.substring(event.indexOf("data:") + "data:".length())))
			.toList();
		assertThat(events.get(0).get("type").asString()).isEqualTo("response.created");
		JsonNode done = events.get(events.size() - 1);
		assertThat(done.get("type").asString()).isEqualTo("response.completed");
		assertThat(text(done.get("response"))).isEqualTo("Hello, world");
		assertThat(sent().get("stream").asBoolean()).isTrue();
	}

	@Test
	void dotnetFunctionToolIsTheProvidersToolAndItsCallAFunctionCallItem() throws Exception {
		this.upstreams.primary().enqueue(json(200, fixture("openai/spec-chat-completion-tool-calls.json")));
		JsonNode body = ok(post("dotnet-request-function-tool.derived.json"));
		JsonNode call = body.get("output").get(0);
		assertThat(call.get("type").asString()).isEqualTo("function_call");
		assertThat(call.get("call_id").asString()).isNotBlank();
		assertThat(call.get("id").asString()).startsWith("fc_");
		assertThat(call.get("status").asString()).isEqualTo("completed");
		assertThat(body.get("tools").get(0).get("name").asString()).isEqualTo("get_weather_at_location");
		JsonNode tool = sent().get("tools").get(0);
		assertThat(tool.get("type").asString()).isEqualTo("function");
		assertThat(tool.get("function").get("name").asString()).isEqualTo("get_weather_at_location");
		assertThat(tool.get("function").get("parameters").get("properties").get("unit").get("enum"))
			.isEqualTo(mapper.readTree("[\"C\",\"F\",\"K\"]"));
		assertThat(tool.get("function").get("strict").asBoolean()).isFalse();
	}

	@Test
	void dotnetFollowUpByPreviousResponseIdIs400NamingItAndNothingGoesUpstream() throws Exception {
		int before = this.upstreams.primary().getRequestCount();
		HttpResponse<String> response = post("dotnet-request-function-call-output-previous-response-id.derived.json");
		assertThat(response.statusCode()).isEqualTo(400);
		JsonNode error = mapper.readTree(response.body()).get("error");
		assertThat(error.get("param").asString()).isEqualTo("previous_response_id");
		assertThat(error.get("message").asString()).contains("send the whole conversation in 'input'");
		assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(before);
	}

	@Test
	void nodeRequiredParamsAreServed() throws Exception {
		this.upstreams.primary().enqueue(Answers.completion("ok"));
		JsonNode body = ok(post("node-test-create-required-params.derived.json"));
		assertThat(text(body)).isEqualTo("ok");
		assertThat(sent().get("messages")).isEqualTo(mapper.readTree("[{\"role\":\"user\",\"content\":\"string\"}]"));
	}

	@Test
	void nodeAllParamsAre400NamingTheFirstFieldTheGatewayCannotKeep() throws Exception {
		int before = this.upstreams.primary().getRequestCount();
		HttpResponse<String> response = post("node-test-create-all-params.derived.json");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(mapper.readTree(response.body()).get("error").get("param").asString()).isEqualTo("include");
		assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(before);
	}

	private HttpResponse<String> post(String fixture) throws Exception {
		return this.server.post("/responses", CLIENT_KEY, fixture("responses/" + fixture), Map.of());
	}

	private static JsonNode ok(HttpResponse<String> response) {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		assertThat(response.headers().firstValue("x-llm-endpoint")).hasValue("primary");
		return mapper.readTree(response.body());
	}

	private JsonNode sent() throws InterruptedException {
		return mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8());
	}

	private static String text(JsonNode response) {
		StringBuilder text = new StringBuilder();
		response.get("output").forEach((item) -> {
			if (item.get("type").asString().equals("message")) {
				item.get("content").forEach((part) -> text.append(part.get("text").asString()));
			}
		});
		return text.toString();
	}

}
