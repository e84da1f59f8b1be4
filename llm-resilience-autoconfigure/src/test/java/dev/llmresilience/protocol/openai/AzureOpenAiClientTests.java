package dev.llmresilience.protocol.openai;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.RecordedAttempts;
import dev.llmresilience.support.Wire;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;

import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.Answers.sse;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code protocol: azure-openai} over real HTTP through the auto-configuration: the deployment URL,
 * {@code api-version} and {@code api-key} Azure receives, and Azure's content filter and retry-after
 * headers, with the documented Azure bodies and streams replayed.
 */
class AzureOpenAiClientTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start(Wire.AZURE_OPENAI);
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void azureReceivesTheDeploymentPathApiVersionAndApiKeyButNoModel() throws Exception {
		this.upstreams.server("primary").enqueue(Wire.AZURE_OPENAI.answer("ok"));
		this.upstreams.runner().run((context) -> assertThat(chat(context).content()).isEqualTo("ok"));
		RecordedRequest received = this.upstreams.server("primary").takeRequest();
		assertThat(received.getUrl().encodedPath()).isEqualTo("/openai/deployments/primary-deployment/chat/completions");
		assertThat(received.getUrl().queryParameter("api-version")).isEqualTo("2024-10-21");
		assertThat(received.getHeaders().get("api-key")).isEqualTo("sk-test-primary-0123456789");
		assertThat(received.getHeaders().get("Authorization")).isNull();
		JsonNode body = mapper.readTree(received.getBody().utf8());
		assertThat(body.has("model")).isFalse();
		assertThat(body.get("messages").get(0).get("content").asString()).isEqualTo("hello");
	}

	@Test
	void baseUrlEndingInAzuresOwnOpenaiPathIsNotRepeated() throws Exception {
		this.upstreams.server("primary").enqueue(Wire.AZURE_OPENAI.answer("ok"));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.base-url=" + this.upstreams.server("primary").url("/openai"),
					"llm.endpoints.primary.api-version=2025-01-01-preview")
			.run((context) -> assertThat(chat(context).content()).isEqualTo("ok"));
		RecordedRequest received = this.upstreams.server("primary").takeRequest();
		assertThat(received.getUrl().encodedPath()).isEqualTo("/openai/deployments/primary-deployment/chat/completions");
		assertThat(received.getUrl().queryParameter("api-version")).isEqualTo("2025-01-01-preview");
	}

	@ParameterizedTest
	@ValueSource(strings = { "2024-10-21", "2024-09-01-preview" })
	void streamAsksForUsageWhereTheApiVersionKnowsTheField(String apiVersion) throws Exception {
		this.upstreams.server("primary").enqueue(sse(Wire.AZURE_OPENAI.stream("Hi")));
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.api-version=" + apiVersion)
			.run((context) -> assertThat(joined(stream(context))).isEqualTo("Hi"));
		JsonNode body = mapper.readTree(this.upstreams.server("primary").takeRequest().getBody().utf8());
		assertThat(body.get("stream_options").get("include_usage").asBoolean()).isTrue();
	}

	@Test
	void streamOfAnOlderApiVersionDoesNotSendTheFieldItWouldRefuse() throws Exception {
		this.upstreams.server("primary").enqueue(sse(Wire.AZURE_OPENAI.stream("Hi")));
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.api-version=2024-06-01")
			.run((context) -> assertThat(joined(stream(context))).isEqualTo("Hi"));
		JsonNode body = mapper.readTree(this.upstreams.server("primary").takeRequest().getBody().utf8());
		assertThat(body.get("stream").asBoolean()).isTrue();
		assertThat(body.has("stream_options")).isFalse();
	}

	@Test
	void contentFilterEverywhereIsTheContentFilteredAnswerWithTheProvidersReasonInTheAttempt() {
		this.upstreams.server("primary").enqueue(json(400, fixture("azure/azure-400-content-filter-error.json")));
		this.upstreams.server("backup").enqueue(json(200, fixture("azure/azure-200-finish-reason-content-filter.json")));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.BUSY);
			assertThat(response.finishReason()).isEqualTo("content_filter");
			assertThat(response.content()).contains("content filter");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.CONTENT_FILTERED, Outcome.CONTENT_FILTERED);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
			assertThat(BreakerCalls.of(context, "backup")).isEqualTo(BreakerCalls.NONE);
		});
	}

	@Test
	void documentedStreamThatPassesTheFilterIsReadThroughItsAnnotationChunks() {
		this.upstreams.server("primary").enqueue(sse(fixture("azure/azure-stream-async-filter-passes.docs-excerpt.txt")));
		this.upstreams.runner().run((context) -> {
			List<ChatChunk> chunks = stream(context);
			assertThat(joined(chunks)).isEqualTo("Color is a");
			assertThat(chunks.get(chunks.size() - 1).finishReason()).isEqualTo("stop");
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
		});
	}

	@Test
	void streamTheFilterCutsAfterItsFirstTextEndsAsFilteredAndIsNotCounted() {
		this.upstreams.server("primary").enqueue(sse(fixture("azure/azure-stream-async-filter-blocked.derived.sse")));
		this.upstreams.runner().withBean(RecordedAttempts.class).run((context) -> {
			List<ChatChunk> chunks = stream(context);
			assertThat(joined(chunks)).isEqualTo("Hey Jude, better");
			assertThat(chunks.get(chunks.size() - 1).finishReason()).isEqualTo("content_filter");
			assertThat(context.getBean(RecordedAttempts.class).outcomes()).containsExactly(Outcome.CONTENT_FILTERED);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
			assertThat(this.upstreams.server("backup").getRequestCount()).isZero();
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "retry-after-ms", "x-ms-retry-after-ms" })
	void rateLimitWithAzuresMillisecondHeaderIsWaitedForThenRetried(String header) {
		this.upstreams.server("primary").enqueue(new MockResponse.Builder(json(429, """
				{"error": {"code": "429", "message": "Requests to the ChatCompletions_Create Operation under Azure OpenAI \
				API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please \
				retry after 1 second."}}
				""")).setHeader(header, "400").build());
		this.upstreams.server("primary").enqueue(Wire.AZURE_OPENAI.answer("after the wait"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.content()).isEqualTo("after the wait");
			assertThat(response.latency()).isBetween(Duration.ofMillis(400), Duration.ofSeconds(5));
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.RATE_LIMITED, Outcome.SUCCESS);
		});
	}

	private static List<ChatChunk> stream(AssertableApplicationContext context) {
		return context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("hello")).collectList().block(WAIT);
	}

	private static String joined(List<ChatChunk> chunks) {
		return chunks.stream().map(ChatChunk::content).collect(Collectors.joining());
	}

}
