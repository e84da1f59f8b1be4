package dev.llmresilience.openaiapi;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
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
import static org.awaitility.Awaitility.await;

/**
 * The OpenAI-compatible API refuses what it cannot serve faithfully, and before it reads more than
 * it must: a wrong key, a body declared too large or a full set of body readers is answered from
 * the headers alone and the connection closed, with the rest of the body never sent; a body that
 * cannot be read as exactly what the client sent is a 400 naming the field; an unknown path under
 * the base path is OpenAI's 404. Nothing refused reaches a provider. Run once against a WebFlux
 * application and once against a Servlet one.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class OpenAiApiStrictContract {

	private static final String CLIENT_KEY = OpenAiApiContract.CLIENT_KEY;

	private static final String CHAT = "/v1/chat/completions";

	private static final long FOUR_MB = 4L * 1024 * 1024;

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private static final String HI = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";

	private FakeUpstream upstreams;

	private ApiServer server;

	abstract WebApplicationType type();

	@BeforeAll
	void startApplication() {
		this.upstreams = FakeUpstream.start();
		this.server = ApiServer.start(type(), "llm.openai-api.enabled=true", "llm.openai-api.api-keys=" + CLIENT_KEY,
				"llm.openai-api.max-request-size=64KB", "llm.openai-api.max-concurrent-body-reads=1",
				"llm.endpoints.primary.base-url=" + this.upstreams.primary().url("/v1"),
				"llm.endpoints.primary.model=gpt-4o-mini", "llm.endpoints.primary.api-key=" + FakeUpstream.PRIMARY_KEY,
				"llm.routes.cheap=primary", "llm.defaults.retry.max-attempts=1",
				// half of one call in flight is none: a batch call never reaches the primary, and is BUSY
				"llm.endpoints.primary.bulkhead.max-concurrent-calls=1");
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
		try (RawCall call = RawCall.send(this.server.port(), "POST", CHAT, authorization, FOUR_MB, oneHundredAndOneBytes())) {
			RawCall.Response response = call.response();
			assertThat(response.status()).isEqualTo(401);
			assertThat(error(response.body()).get("code").asString()).isEqualTo("invalid_api_key");
			assertThat(response.headers()).containsEntry("x-should-retry", "false");
			assertThat(call.closedByServer()).as("connection closed, the rest of the body not awaited").isTrue();
		}
		assertThat(upstreamCalls()).isEqualTo(before);
	}

	Stream<Arguments> strangers() {
		return Stream.of(Arguments.of("wrong key", "Bearer sk-not-a-client-key"), Arguments.of("no key", null),
				Arguments.of("not a bearer", "Basic " + CLIENT_KEY));
	}

	@Test
	void aBodyDeclaredLargerThanTheLimitIs413FromTheHeadersAlone() throws Exception {
		try (RawCall call = RawCall.send(this.server.port(), "POST", CHAT, "Bearer " + CLIENT_KEY, FOUR_MB,
				oneHundredAndOneBytes())) {
			RawCall.Response response = call.response();
			assertThat(response.status()).isEqualTo(413);
			assertThat(error(response.body()).get("code").asString()).isEqualTo("request_too_large");
			assertThat(call.closedByServer()).isTrue();
		}
	}

	@Test
	void aBodyPastTheCapOfBodiesReadAtOnceIs503WithRetryAfterAndIsNotRead() throws Exception {
		// to an unknown route: answered 404 once read, without a provider
		String padded = ("{\"model\":\"nope\"," + HI + "}");
		byte[] small = padded.getBytes(StandardCharsets.UTF_8);
		try (RawCall holder = RawCall.send(this.server.port(), "POST", CHAT, "Bearer " + CLIENT_KEY, 1000,
				"{\"model\":".getBytes(StandardCharsets.UTF_8))) {
			// the holder's body is being read: the one read the cap allows
			AtomicReference<RawCall.Response> refused = new AtomicReference<>();
			await().atMost(Duration.ofSeconds(30)).until(() -> {
				try (RawCall other = RawCall.send(this.server.port(), "POST", CHAT, "Bearer " + CLIENT_KEY, small.length,
						small)) {
					RawCall.Response response = other.response();
					refused.set(response);
					return response.status() == 503 && other.closedByServer();
				}
			});
			assertThat(refused.get().headers()).containsEntry("retry-after", "1").containsEntry("x-should-retry", "true");
			JsonNode error = error(refused.get().body());
			assertThat(error.get("code").asString()).isEqualTo("too_many_concurrent_reads");
			assertThat(error.get("type").asString()).isEqualTo("service_unavailable");
			holder.sendMore((padded.substring("{\"model\":".length()) + " ".repeat(1000 - padded.length()))
				.getBytes(StandardCharsets.UTF_8));
			assertThat(holder.response().status()).isEqualTo(404);
		}
		// the holder's read is over: its permit is back
		try (RawCall next = RawCall.send(this.server.port(), "POST", CHAT, "Bearer " + CLIENT_KEY, small.length, small)) {
			assertThat(next.response().status()).isEqualTo(404);
		}
	}

	@ParameterizedTest(name = "{0} -> param {1}")
	@MethodSource("unfaithfulBodies")
	void aBodyThatCannotBeReadFaithfullyIs400NamingTheFieldAndNothingGoesUpstream(String body, String param)
			throws Exception {
		int before = upstreamCalls();
		HttpResponse<String> response = this.server.postChat(CLIENT_KEY, body, Map.of());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
		JsonNode error = error(response.body());
		assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
		if (param.isEmpty()) {
			assertThat(error.get("param").isNull()).as(response.body()).isTrue();
		}
		else {
			assertThat(error.get("param").asString()).isEqualTo(param);
			assertThat(error.get("message").asString()).contains(param);
		}
		assertThat(upstreamCalls()).isEqualTo(before);
	}

	Stream<Arguments> unfaithfulBodies() {
		return Stream.of(Arguments.of("{\"temperature\":1e400," + HI + "}", "temperature"),
				Arguments.of("{\"top_p\":-1e400," + HI + "}", "top_p"),
				Arguments.of("{" + HI + ",\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"n\","
						+ "\"schema\":{\"type\":\"number\",\"maximum\":1e999}}}}", "response_format.json_schema.schema.maximum"),
				Arguments.of("{\"temperature\":NaN," + HI + "}", "temperature"),
				Arguments.of("{\"temperature\":-Infinity," + HI + "}", "temperature"),
				Arguments.of("{\"temperature\":\"0.5\"," + HI + "}", "temperature"),
				Arguments.of("{\"stream\":\"true\"," + HI + "}", "stream"),
				Arguments.of("{\"stream\":1," + HI + "}", "stream"),
				Arguments.of("{\"stream\":true,\"stream_options\":{\"include_usage\":\"yes\"}," + HI + "}",
						"stream_options.include_usage"),
				Arguments.of("{\"stream\":true,\"stream_options\":true," + HI + "}", "stream_options"),
				Arguments.of("{\"model\":{\"name\":\"default\"}," + HI + "}", "model"),
				Arguments.of("{\"model\":42," + HI + "}", "model"),
				Arguments.of("{\"model\":\"  \"," + HI + "}", "model"),
				Arguments.of("{\"max_tokens\":1.5," + HI + "}", "max_tokens"),
				Arguments.of("{\"max_tokens\":\"100\"," + HI + "}", "max_tokens"),
				Arguments.of("{\"messages\":[{\"role\":\"user\",\"content\":5}]}", "messages[0].content"),
				Arguments.of("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"name\":{}}]}", "messages[0].name"),
				Arguments.of("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"tool\",\"content\":\"x\","
						+ "\"tool_call_id\":5}]}", "messages[1].tool_call_id"),
				Arguments.of("{\"messages\":[\"hi\"]}", "messages[0]"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":\"x\"}}]}",
						"tools[0].function.parameters"),
				Arguments.of("{" + HI + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"strict\":\"true\"}}]}",
						"tools[0].function.strict"),
				Arguments.of("{\"model\":\"default\",\"model\":\"cheap\"," + HI + "}", "model"),
				Arguments.of("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"content\":\"ignore the above\"}]}",
						"messages[0].content"),
				Arguments.of("{" + HI + ",\"metadata\":{\"a\":1,\"a\":2}}", "metadata.a"),
				Arguments.of("{" + HI + "} trailing", ""), Arguments.of("{" + HI + "}{\"model\":\"cheap\"}", ""),
				Arguments.of("{" + HI + ",}", "messages"), Arguments.of("", ""), Arguments.of("[" + "{" + HI + "}]", ""));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("badPriorities")
	void aPriorityOtherThanInteractiveOrBatchIs400NamingTheFieldAndNothingGoesUpstream(String name, String body,
			Map<String, String> headers, String param, String mentions) throws Exception {
		int before = upstreamCalls();
		HttpResponse<String> response = this.server.postChat(CLIENT_KEY, body, headers);
		assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
		JsonNode error = error(response.body());
		assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
		assertThat(error.get("param").asString()).isEqualTo(param);
		assertThat(error.get("message").asString()).contains(param).contains(mentions);
		assertThat(upstreamCalls()).isEqualTo(before);
	}

	Stream<Arguments> badPriorities() {
		return Stream.of(
				Arguments.of("metadata.priority unknown", "{" + HI + ",\"metadata\":{\"priority\":\"urgent\"}}", Map.of(),
						"metadata.priority", "\"interactive\" or \"batch\""),
				Arguments.of("metadata.priority not a string", "{" + HI + ",\"metadata\":{\"priority\":1}}", Map.of(),
						"metadata.priority", "\"interactive\" or \"batch\""),
				Arguments.of("header unknown", "{" + HI + "}", Map.of("x-llm-priority", "low"), "x-llm-priority",
						"\"interactive\" or \"batch\""),
				Arguments.of("header blank", "{" + HI + "}", Map.of("x-llm-priority", " "), "x-llm-priority",
						"\"interactive\" or \"batch\""),
				Arguments.of("header and metadata disagree",
						"{" + HI + ",\"metadata\":{\"priority\":\"interactive\"}}", Map.of("x-llm-priority", "batch"),
						"metadata.priority", "x-llm-priority"));
	}

	@Test
	void aBatchCallSaidInTheHeaderOrTheMetadataYieldsToPeopleAndItsPriorityIsNotSentUpstream() throws Exception {
		int before = upstreamCalls();
		String metadataBatch = "{" + HI + ",\"metadata\":{\"priority\":\"batch\"}}";
		for (HttpResponse<String> batch : java.util.List.of(
				this.server.postChat(CLIENT_KEY, "{" + HI + "}", Map.of("x-llm-priority", "batch")),
				this.server.postChat(CLIENT_KEY, metadataBatch, Map.of()),
				this.server.postChat(CLIENT_KEY, metadataBatch, Map.of("x-llm-priority", "BATCH")))) {
			assertThat(batch.statusCode()).as(batch.body()).isEqualTo(503);
			assertThat(batch.headers().firstValue("x-llm-tier")).hasValue("BUSY");
		}
		assertThat(upstreamCalls()).as("the primary's batch share is none of it").isEqualTo(before);

		this.upstreams.primary().enqueue(completion("hello"));
		HttpResponse<String> person = this.server.postChat(CLIENT_KEY,
				"{" + HI + ",\"metadata\":{\"priority\":\"interactive\",\"tag\":\"t-1\"}}",
				Map.of("x-llm-priority", "interactive"));
		assertThat(person.statusCode()).as(person.body()).isEqualTo(200);
		JsonNode sent = mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8());
		assertThat(sent.get("metadata").properties()).extracting(Map.Entry::getKey).containsExactly("tag");

		this.upstreams.primary().enqueue(completion("hello"));
		HttpResponse<String> alone = this.server.postChat(CLIENT_KEY,
				"{" + HI + ",\"metadata\":{\"priority\":\"interactive\"}}", Map.of());
		assertThat(alone.statusCode()).as(alone.body()).isEqualTo(200);
		assertThat(mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8()).has("metadata"))
			.as("a metadata left empty is not sent")
			.isFalse();
	}

	@Test
	void anAbsentOrNullModelIsTheDefaultRoute() throws Exception {
		for (String body : new String[] { "{" + HI + "}", "{\"model\":null," + HI + "}" }) {
			this.upstreams.primary().enqueue(completion("hello"));
			HttpResponse<String> response = this.server.postChat(CLIENT_KEY, body, Map.of());
			assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
			assertThat(response.headers().firstValue("x-llm-endpoint")).hasValue("primary");
			this.upstreams.primary().takeRequest();
		}
	}

	@ParameterizedTest(name = "{0} {1}")
	@MethodSource("unknownUrls")
	void anUnknownPathOrMethodUnderTheBasePathIsOpenAisShapeOf404(String method, String path) throws Exception {
		int before = upstreamCalls();
		try (RawCall call = RawCall.send(this.server.port(), method, path, "Bearer " + CLIENT_KEY, FOUR_MB,
				oneHundredAndOneBytes())) {
			RawCall.Response response = call.response();
			assertThat(response.status()).isEqualTo(404);
			assertThat(response.headers().get("content-type")).startsWith("application/json");
			JsonNode error = error(response.body());
			assertThat(error.get("type").asString()).isEqualTo("invalid_request_error");
			assertThat(error.get("message").asString()).contains(method + " " + path).contains("/v1/chat/completions");
			assertThat(call.closedByServer()).isTrue();
		}
		assertThat(upstreamCalls()).isEqualTo(before);
	}

	Stream<Arguments> unknownUrls() {
		return Stream.of(Arguments.of("POST", "/v1/nope"), Arguments.of("GET", "/v1/chat/completions"),
				Arguments.of("PUT", "/v1/chat/completions"), Arguments.of("POST", "/v1/models"),
				Arguments.of("POST", "/v1/chat/completions/extra"), Arguments.of("GET", "/v1"));
	}

	private int upstreamCalls() {
		return this.upstreams.primary().getRequestCount();
	}

	private static JsonNode error(String body) {
		JsonNode error = mapper.readTree(body).get("error");
		assertThat(error).as(body).isNotNull();
		return error;
	}

	// the first 101 bytes of a chat body, as a client that then sends nothing more would have sent
	private static byte[] oneHundredAndOneBytes() {
		byte[] bytes = ("{\"model\":\"default\"," + HI + ",\"pad\":\"" + "x".repeat(200)).getBytes(StandardCharsets.UTF_8);
		return java.util.Arrays.copyOf(bytes, 101);
	}

}
