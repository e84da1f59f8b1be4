package dev.llmresilience.openaiapi;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;
import java.util.stream.Stream;

import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;

import static dev.llmresilience.support.Answers.completion;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code POST /v1/responses} refuses what it cannot serve faithfully, and before it reads more
 * than it must: a wrong key or a body declared too large is answered from the headers alone and
 * the connection closed; each field the gateway does not keep (stored responses, conversations,
 * built-in tools, background runs...) and each field of the wrong type is a 400 naming it, in
 * OpenAI's error shape, and nothing reaches a provider. Run once against a WebFlux application and
 * once against a Servlet one.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ResponsesApiStrictContract {

	private static final String CLIENT_KEY = OpenAiApiContract.CLIENT_KEY;

	private static final String RESPONSES = "/v1/responses";

	private static final long FOUR_MB = 4L * 1024 * 1024;

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private static final String HI = "\"input\":\"hi\"";

	private FakeUpstream upstreams;

	private ApiServer server;

	abstract WebApplicationType type();

	@BeforeAll
	void startApplication() {
		this.upstreams = FakeUpstream.start();
		this.server = ApiServer.start(type(), "llm.openai-api.enabled=true", "llm.openai-api.api-keys=" + CLIENT_KEY,
				"llm.openai-api.max-request-size=64KB",
				"llm.endpoints.primary.base-url=" + this.upstreams.primary().url("/v1"),
				"llm.endpoints.primary.model=gpt-4o-mini", "llm.endpoints.primary.api-key=" + FakeUpstream.PRIMARY_KEY,
				"llm.defaults.retry.max-attempts=1");
	}

	@AfterAll
	void stopApplication() {
		this.server.close();
		this.upstreams.close();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("strangers")
	void aWrongOrMissingKeyIs401AtOnceWhateverTheContentLengthAndTheBodyIsNeverRead(String who, String authorization)
			throws Exception {
		int before = upstreamCalls();
		try (RawCall call = RawCall.send(this.server.port(), "POST", RESPONSES, authorization, FOUR_MB, firstBytes())) {
			RawCall.Response response = call.response();
			assertThat(response.status()).isEqualTo(401);
			assertThat(error(response.body()).get("code").asString()).isEqualTo("invalid_api_key");
			assertThat(call.closedByServer()).as("connection closed, the rest of the body not awaited").isTrue();
		}
		assertThat(upstreamCalls()).isEqualTo(before);
	}

	Stream<Arguments> strangers() {
		return Stream.of(Arguments.of("wrong key", "Bearer sk-not-a-client-key"), Arguments.of("no key", null));
	}

	@Test
	void aBodyDeclaredLargerThanTheLimitIs413FromTheHeadersAlone() throws Exception {
		try (RawCall call = RawCall.send(this.server.port(), "POST", RESPONSES, "Bearer " + CLIENT_KEY, FOUR_MB,
				firstBytes())) {
			RawCall.Response response = call.response();
			assertThat(response.status()).isEqualTo(413);
			assertThat(error(response.body()).get("code").asString()).isEqualTo("request_too_large");
			assertThat(call.closedByServer()).isTrue();
		}
	}

	@ParameterizedTest(name = "{0} -> param {1}")
	@MethodSource({ "unkeptFields", "illTypedFields" })
	void aFieldTheGatewayCannotHonourIs400NamingItAndNothingGoesUpstream(String body, String param) throws Exception {
		int before = upstreamCalls();
		HttpResponse<String> response = this.server.post("/responses", CLIENT_KEY, body, Map.of());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
		assertThat(response.headers().firstValue("content-type")).hasValueSatisfying((type) -> assertThat(type)
			.startsWith("application/json"));
		JsonNode error = error(response.body());
		assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
		assertThat(error.get("param").asString()).as(response.body()).isEqualTo(param);
		assertThat(error.get("message").asString()).contains(param);
		assertThat(upstreamCalls()).isEqualTo(before);
	}

	Stream<Arguments> unkeptFields() {
		return Stream.of(Arguments.of("{" + HI + ",\"previous_response_id\":\"resp_123\"}", "previous_response_id"),
				Arguments.of("{" + HI + ",\"store\":true}", "store"),
				Arguments.of("{" + HI + ",\"background\":true}", "background"),
				Arguments.of("{" + HI + ",\"conversation\":\"conv_123\"}", "conversation"),
				Arguments.of("{" + HI + ",\"prompt\":{\"id\":\"pmpt_123\"}}", "prompt"),
				Arguments.of("{" + HI + ",\"include\":[\"reasoning.encrypted_content\"]}", "include"),
				Arguments.of("{" + HI + ",\"reasoning\":{\"effort\":\"low\"}}", "reasoning"),
				Arguments.of("{" + HI + ",\"text\":{\"format\":{\"type\":\"json_object\"}}}", "text"),
				Arguments.of("{" + HI + ",\"truncation\":\"auto\"}", "truncation"),
				Arguments.of("{" + HI + ",\"service_tier\":\"flex\"}", "service_tier"),
				Arguments.of("{" + HI + ",\"max_tool_calls\":3}", "max_tool_calls"),
				Arguments.of("{" + HI + ",\"top_logprobs\":2}", "top_logprobs"),
				Arguments.of("{" + HI + ",\"safety_identifier\":\"u-1\"}", "safety_identifier"),
				Arguments.of("{" + HI + ",\"prompt_cache_key\":\"k\"}", "prompt_cache_key"),
				Arguments.of("{" + HI + ",\"context_management\":[{\"type\":\"compaction\"}]}", "context_management"),
				Arguments.of("{" + HI + ",\"a_field_openai_adds_next_year\":1}", "a_field_openai_adds_next_year"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"web_search\"}]}", "tools[0].type"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"file_search\",\"vector_store_ids\":[\"vs_1\"]}]}",
						"tools[0].type"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"code_interpreter\",\"container\":{\"type\":\"auto\"}}]}",
						"tools[0].type"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"computer_use_preview\",\"display_width\":1,"
						+ "\"display_height\":1,\"environment\":\"linux\"}]}", "tools[0].type"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"image_generation\"}]}", "tools[0].type"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"mcp\",\"server_label\":\"x\"}]}", "tools[0].type"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"function\",\"name\":\"f\",\"defer_loading\":true}]}",
						"tools[0].defer_loading"),
				Arguments.of("{" + HI + ",\"tool_choice\":{\"type\":\"web_search_preview\"}}", "tool_choice"),
				Arguments.of("{\"input\":[{\"type\":\"item_reference\",\"id\":\"msg_1\"}]}", "input[0].type"),
				Arguments.of("{\"input\":[{\"type\":\"reasoning\",\"summary\":[]}]}", "input[0].type"),
				Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_file\",\"file_id\":\"f\"}]}]}",
						"input[0].content[0].type"),
				Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":\"hi\",\"phase\":\"final\"}]}", "input[0].phase"));
	}

	Stream<Arguments> illTypedFields() {
		return Stream.of(Arguments.of("{\"stream\":\"true\"," + HI + "}", "stream"),
				Arguments.of("{\"model\":42," + HI + "}", "model"), Arguments.of("{\"input\":5}", "input"),
				Arguments.of("{\"input\":[]}", "input"), Arguments.of("{\"model\":\"default\"}", "input"),
				Arguments.of("{\"temperature\":\"0.5\"," + HI + "}", "temperature"),
				Arguments.of("{\"temperature\":NaN," + HI + "}", "temperature"),
				Arguments.of("{\"top_p\":1e400," + HI + "}", "top_p"),
				Arguments.of("{\"max_output_tokens\":1.5," + HI + "}", "max_output_tokens"),
				Arguments.of("{\"instructions\":5," + HI + "}", "instructions"),
				Arguments.of("{\"store\":\"false\"," + HI + "}", "store"),
				Arguments.of("{\"parallel_tool_calls\":\"yes\"," + HI + "}", "parallel_tool_calls"),
				Arguments.of("{\"stream\":true,\"stream_options\":{\"include_obfuscation\":\"no\"}," + HI + "}",
						"stream_options.include_obfuscation"),
				Arguments.of("{\"user\":{}," + HI + "}", "user"),
				Arguments.of("{\"metadata\":{\"a\":1}," + HI + "}", "metadata.a"),
				Arguments.of("{\"metadata\":{\"priority\":\"urgent\"}," + HI + "}", "metadata.priority"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"function\",\"name\":\"f\",\"parameters\":\"x\"}]}",
						"tools[0].parameters"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"function\",\"name\":\"f\",\"strict\":\"true\"}]}",
						"tools[0].strict"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"function\"}]}", "tools[0].name"),
				Arguments.of("{" + HI + ",\"tool_choice\":\"sometimes\"}", "tool_choice"),
				Arguments.of("{\"input\":[{\"role\":\"tool\",\"content\":\"x\"}]}", "input[0].role"),
				Arguments.of("{\"input\":[{\"role\":\"user\",\"content\":5}]}", "input[0].content"),
				Arguments.of("{\"input\":[\"hi\"]}", "input[0]"),
				Arguments.of("{\"input\":[{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":\"{}\"}]}",
						"input[0].call_id"),
				Arguments.of("{\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"c\",\"output\":5}]}",
						"input[0].output"),
				Arguments.of("{\"model\":\"default\",\"model\":\"other\"," + HI + "}", "model"));
	}

	@Test
	void storeFalseAndTheDefaultsOfWhatTheGatewayCannotKeepAreServed() throws Exception {
		this.upstreams.primary().enqueue(completion("hello"));
		HttpResponse<String> response = this.server.post("/responses", CLIENT_KEY, "{" + HI + ",\"store\":false,"
				+ "\"background\":false,\"truncation\":\"disabled\",\"previous_response_id\":null}", Map.of());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
		JsonNode body = mapper.readTree(response.body());
		assertThat(body.get("store").asBoolean()).isFalse();
		assertThat(body.get("output").get(0).get("content").get(0).get("text").asString()).isEqualTo("hello");
		JsonNode sent = mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8());
		assertThat(sent.has("store")).isFalse();
		assertThat(sent.has("background")).isFalse();
	}

	@Test
	void anUnknownPathStill404sNamingTheResponsesPath() throws Exception {
		HttpResponse<String> response = this.server.post("/responses/resp_123/cancel", CLIENT_KEY, "{}", Map.of());
		assertThat(response.statusCode()).isEqualTo(404);
		assertThat(error(response.body()).get("message").asString()).contains("POST /v1/responses");
	}

	private int upstreamCalls() {
		return this.upstreams.primary().getRequestCount();
	}

	private static JsonNode error(String body) {
		JsonNode error = mapper.readTree(body).get("error");
		assertThat(error).as(body).isNotNull();
		return error;
	}

	private static byte[] firstBytes() {
		byte[] bytes = ("{\"model\":\"default\"," + HI + ",\"metadata\":{\"pad\":\"" + "x".repeat(200))
			.getBytes(StandardCharsets.UTF_8);
		return Arrays.copyOf(bytes, 101);
	}

}
