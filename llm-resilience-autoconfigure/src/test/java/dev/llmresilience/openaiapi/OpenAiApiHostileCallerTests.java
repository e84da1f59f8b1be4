package dev.llmresilience.openaiapi;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import mockwebserver3.MockWebServer;
import mockwebserver3.QueueDispatcher;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.WebApplicationType;

import static dev.llmresilience.support.Answers.completion;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hostile caller through the OpenAI-compatible API (the gateway's rules for callers, met at the
 * API's door): fields the starter writes itself, smuggled in another spelling, are refused with a 400
 * naming the field before anything reaches a provider or a breaker; so is {@code n > 1}; a new
 * {@code model} string per request is a 404 that creates no meter series; a request id the caller
 * chose is echoed only when it is a short token.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class OpenAiApiHostileCallerTests {

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
				"llm.endpoints.backup.base-url=" + this.upstreams.backup().url("/v1"),
				"llm.endpoints.backup.model=backup-model", "llm.endpoints.backup.priority=1");
		// a request that gets past the checks is answered at once (a 404) instead of waiting on an empty
		// queue, so that such a test fails on the answer it gets rather than on a time-out
		for (MockWebServer upstream : List.of(this.upstreams.primary(), this.upstreams.backup())) {
			((QueueDispatcher) upstream.getDispatcher()).setFailFast(true);
		}
	}

	@AfterAll
	void stopApplication() {
		this.server.close();
		this.upstreams.close();
	}

	@Test
	void reservedFieldsInAnotherSpellingAreRefusedNamingTheFieldAndNothingGoesUpstream() throws Exception {
		int before = this.upstreams.primary().getRequestCount() + this.upstreams.backup().getRequestCount();
		// each would override what the starter writes: a dearer model, a stream read as a chat, the messages
		for (String field : List.of("Model", " STREAM", "Messages", "MAX_TOKENS", "Stream_Options", "Tools")) {
			String value = field.trim().equalsIgnoreCase("stream") ? "true" : "\"gpt-4-32k\"";
			for (boolean stream : List.of(false, true)) {
				HttpResponse<String> response = post("{\"model\":\"default\",\"stream\":" + stream
						+ ",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"" + field + "\":" + value + "}", Map.of());
				assertThat(response.statusCode()).as(field + (stream ? " (stream)" : "")).isEqualTo(400);
				JsonNode error = mapper.readTree(response.body()).get("error");
				assertThat(error.get("code").asString()).isEqualTo("reserved_field");
				assertThat(error.get("message").asString()).contains(field.trim());
				assertThat(response.headers().firstValue("x-should-retry")).hasValue("false");
			}
		}
		assertThat(this.upstreams.primary().getRequestCount() + this.upstreams.backup().getRequestCount())
			.isEqualTo(before);
		assertThat(BreakerCalls.of(this.server.context(), "primary")).isEqualTo(BreakerCalls.NONE);
		assertThat(BreakerCalls.of(this.server.context(), "backup")).isEqualTo(BreakerCalls.NONE);
	}

	@Test
	void manyChoicesAreRefusedBeforeTheyMultiplyTheCost() throws Exception {
		int before = this.upstreams.primary().getRequestCount();
		HttpResponse<String> response = post(
				"{\"model\":\"default\",\"n\":8,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", Map.of());
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(mapper.readTree(response.body()).get("error").get("param").asString()).isEqualTo("n");
		assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(before);
	}

	@Test
	void aNewModelStringPerRequestIsA404AndCreatesNoMeterSeries() throws Exception {
		List<String> models = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			models.add("hostile-" + UUID.randomUUID());
		}
		for (String model : models) {
			HttpResponse<String> response = post(
					"{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", Map.of());
			assertThat(response.statusCode()).isEqualTo(404);
			assertThat(mapper.readTree(response.body()).get("error").get("code").asString()).isEqualTo("model_not_found");
		}
		// a real answer too, so that the meters exist and are looked at
		this.upstreams.primary().enqueue(completion("hello"));
		assertThat(post("{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}", Map.of())
			.statusCode()).isEqualTo(200);
		List<String> tagValues = new ArrayList<>();
		for (Meter meter : this.server.context().getBean(MeterRegistry.class).getMeters()) {
			for (Tag tag : meter.getId().getTags()) {
				tagValues.add(tag.getValue());
			}
		}
		assertThat(tagValues).isNotEmpty().noneMatch((value) -> value.startsWith("hostile-"));
	}

	@Test
	void aRequestIdThatIsNotAShortTokenIsReplacedNotEchoed() throws Exception {
		String hostile = "x".repeat(300);
		HttpResponse<String> response = post("{\"model\":\"nope\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
				Map.of("x-request-id", hostile));
		String echoed = response.headers().firstValue("x-request-id").orElseThrow();
		assertThat(echoed).isNotEqualTo(hostile).hasSizeLessThanOrEqualTo(128);
		assertThat(response.body()).doesNotContain(hostile);
		HttpResponse<String> spaced = post("{\"model\":\"nope\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
				Map.of("x-request-id", "id with <script> in it"));
		assertThat(spaced.headers().firstValue("x-request-id").orElseThrow()).doesNotContain("<script>");
		assertThat(spaced.body()).doesNotContain("<script>");
	}

	private HttpResponse<String> post(String body, Map<String, String> headers) throws Exception {
		return this.server.postChat(CLIENT_KEY, body, headers);
	}

}
