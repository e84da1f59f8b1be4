package dev.llmresilience.protocol.openai;

import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.Map;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.completionBody;
import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.FakeUpstream.PRIMARY_KEY;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The OpenAI-compatible wire format over real HTTP: what the provider receives, what of its
 * answer reaches the {@link ChatResponse}, and the transport's safety limits (no redirects, a
 * bounded body).
 */
class OpenAiChatClientTests {

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
	void specCompletionIsReadToleratingUnknownFields() {
		this.upstreams.primary().enqueue(json(200, fixture("openai/spec-chat-completion-default.json")));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.price.input-per-million=2.5",
					"llm.endpoints.primary.price.output-per-million=10")
			.run((context) -> {
				ChatResponse response = chat(context);
				assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
				assertThat(response.endpoint()).isEqualTo("primary");
				assertThat(response.content()).isEqualTo("Hello! How can I assist you today?");
				assertThat(response.model()).isEqualTo("gpt-5.4");
				assertThat(response.finishReason()).isEqualTo("stop");
				assertThat(response.toolCalls()).isEmpty();
				assertThat(response.usage()).isEqualTo(new Usage(19, 10));
				assertThat(response.cost()).isEqualByComparingTo(new BigDecimal("0.0001475"));
			});
	}

	@Test
	void blankKeepAliveLinesBeforeTheJsonBodyAreTolerated() {
		this.upstreams.primary().enqueue(json(200, fixture("compat/composed-deepseek-blank-lines-then-json-body.txt")));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(response.content()).isEqualTo("Hello! How can I assist you today?");
			assertThat(response.usage()).isEqualTo(new Usage(19, 10));
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
		});
	}

	@Test
	void nullUsageLeavesUsageAndCostAbsent() {
		this.upstreams.primary().enqueue(json(200, """
				{"id": "chatcmpl-2", "object": "chat.completion", "model": "deepseek-chat", "usage": null,
				 "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi."}, "finish_reason": "stop"}]}
				"""));
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.price.input-per-million=1").run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.content()).isEqualTo("Hi.");
			assertThat(response.model()).isEqualTo("deepseek-chat");
			assertThat(response.usage()).isNull();
			assertThat(response.cost()).isNull();
		});
	}

	@Test
	void configuredModelNamesTheAnswerWhenTheProviderNamesNone() {
		this.upstreams.primary().enqueue(json(200, """
				{"choices": [{"message": {"role": "assistant", "content": "Hi."}, "finish_reason": "stop"}]}
				"""));
		this.upstreams.runner().run((context) -> assertThat(chat(context).model()).isEqualTo("primary-model"));
	}

	@Test
	void providerReceivesModelParametersExtraFieldsHeadersAndKey() throws Exception {
		this.upstreams.primary().enqueue(completion("ok"));
		ChatRequest request = ChatRequest.builder()
			.system("Be brief.")
			.user("hello")
			.temperature(0.2)
			.maxTokens(64)
			.extra("top_p", 0.9)
			.extra("response_format", Map.of("type", "json_object"))
			.build();
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.headers.OpenAI-Organization=org-tests",
					"llm.endpoints.primary.headers.x-trace=abc")
			.run((context) -> assertThat(chat(context, request).content()).isEqualTo("ok"));
		RecordedRequest received = this.upstreams.primary().takeRequest();
		assertThat(received.getMethod()).isEqualTo("POST");
		assertThat(received.getUrl().encodedPath()).isEqualTo("/v1/chat/completions");
		assertThat(received.getHeaders().get("Authorization")).isEqualTo("Bearer " + PRIMARY_KEY);
		assertThat(received.getHeaders().get("OpenAI-Organization")).isEqualTo("org-tests");
		assertThat(received.getHeaders().get("x-trace")).isEqualTo("abc");
		assertThat(received.getHeaders().get("Content-Type")).startsWith("application/json");
		JsonNode body = mapper.readTree(received.getBody().utf8());
		assertThat(body.get("model").asString()).isEqualTo("primary-model");
		assertThat(body.get("temperature").asDouble()).isEqualTo(0.2);
		assertThat(body.get("max_tokens").asInt()).isEqualTo(64);
		assertThat(body.get("top_p").asDouble()).isEqualTo(0.9);
		assertThat(body.get("response_format").get("type").asString()).isEqualTo("json_object");
		assertThat(body.get("messages")).hasSize(2);
		assertThat(body.get("messages").get(0).get("role").asString()).isEqualTo("system");
		assertThat(body.get("messages").get(1).get("content").asString()).isEqualTo("hello");
		// chat goes upstream as a stream by default, so that first-token-timeout bounds it too
		assertThat(body.get("stream").asBoolean()).isTrue();
		assertThat(body.get("stream_options").get("include_usage").asBoolean()).isTrue();
		assertThat(body.has("extra")).isFalse();
	}

	@Test
	void endpointThatOptsOutOfUpstreamStreamingSendsChatAsOnePlainRequest() throws Exception {
		this.upstreams.primary().enqueue(completion("ok"));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.upstream-streaming=false")
			.run((context) -> assertThat(chat(context, ChatRequest.ofUser("hello")).content()).isEqualTo("ok"));
		JsonNode body = mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8());
		assertThat(body.has("stream")).isFalse();
		assertThat(body.has("stream_options")).isFalse();
	}

	@Test
	void providerReceivesNoAuthorizationWhenNoApiKeyIsSet() throws Exception {
		this.upstreams.primary().enqueue(completion("ok"));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.api-key=")
			.run((context) -> assertThat(chat(context).content()).isEqualTo("ok"));
		RecordedRequest received = this.upstreams.primary().takeRequest();
		assertThat(received.getHeaders().get("Authorization")).isNull();
		JsonNode body = mapper.readTree(received.getBody().utf8());
		assertThat(body.has("temperature")).isFalse();
		assertThat(body.has("max_tokens")).isFalse();
	}

	@Test
	void providerMessageRepeatingTheKeyOrAHeaderValueIsRedacted() {
		String organization = "org-redaction-test-5a9f0c";
		this.upstreams.primary().enqueue(json(403, "{\"error\":{\"message\":\"Key " + PRIMARY_KEY
				+ " may not act for organization " + organization + "\",\"type\":\"invalid_request_error\","
				+ "\"code\":\"forbidden\"}}"));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.headers.OpenAI-Organization=" + organization,
					"llm.endpoints.primary.headers.OpenAI-Beta=v1")
			.run((context) -> {
				Throwable error = catchThrowable(() -> FakeUpstream.endpoint(context, "primary")
					.chat(ChatRequest.ofUser("hello"), (attempt) -> {
					})
					.block(Duration.ofSeconds(10)));
				assertThat(error).hasMessageContaining("HTTP 403")
					.hasMessageContaining("may not act for organization [redacted]")
					.hasMessageNotContaining(PRIMARY_KEY)
					.hasMessageNotContaining(organization);
			});
	}

	@ParameterizedTest
	@ValueSource(ints = { 301, 302, 307, 308 })
	void redirectIsNotFollowedSoTheKeyStaysHomeAndTheEndpointFallsBack(int status) throws IOException {
		try (MockWebServer elsewhere = new MockWebServer()) {
			elsewhere.start();
			elsewhere.enqueue(completion("followed the redirect"));
			this.upstreams.primary()
				.enqueue(new MockResponse.Builder().code(status)
					.setHeader("Location", elsewhere.url("/v1/chat/completions").toString())
					.build());
			this.upstreams.backup().enqueue(completion("from backup"));
			this.upstreams.runner().run((context) -> {
				ChatResponse response = chat(context);
				assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(response.content()).isEqualTo("from backup");
				assertThat(response.attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.CONFIGURATION_ERROR, Outcome.SUCCESS);
				assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(1));
			});
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(elsewhere.getRequestCount()).isZero();
		}
	}

	@Test
	void bodyLargerThanMaxResponseSizeIsMalformedAndFallsBack() {
		String large = completionBody("x".repeat(100 * 1024));
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(json(200, large));
		}
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().withPropertyValues("llm.defaults.max-response-size=2KB").run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.MALFORMED_RESPONSE, Outcome.MALFORMED_RESPONSE, Outcome.MALFORMED_RESPONSE,
						Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

}
