package dev.llmresilience.protocol;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.LlmBreakersEndpoint;
import dev.llmresilience.engine.LlmBreakersEndpoint.BreakersDescriptor;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers.Ending;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.Wire;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static dev.llmresilience.support.Answers.sse;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * One route over three protocols, {@code mixed: [openai, anthropic, azure]}, each endpoint on its
 * own local server: the route answers through each protocol in turn as the earlier ones fail, in
 * chat and in stream, with the same tiers, attempts, breakers, meters and actuator report as a
 * route of one protocol. And routes that mix OpenAI's two APIs ({@code openai-responses} and
 * {@code openai}), either first.
 */
class MixedProtocolRouteTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final CountDownLatch release = new CountDownLatch(1);

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		Map<String, Wire> endpoints = new LinkedHashMap<>();
		endpoints.put("openai", Wire.OPENAI);
		endpoints.put("anthropic", Wire.ANTHROPIC);
		endpoints.put("azure", Wire.AZURE_OPENAI);
		endpoints.put("responses", Wire.OPENAI_RESPONSES);
		this.upstreams = FakeUpstream.start(endpoints);
	}

	@AfterEach
	void stop() {
		this.release.countDown();
		this.upstreams.close();
	}

	@Test
	void chatAnswersThroughEachProtocolInTurnAsTheEarlierOnesFail() {
		this.upstreams.server("openai").enqueue(Wire.OPENAI.answer("from openai"));
		failThrice("openai", 500);
		failThrice("openai", 500);
		this.upstreams.server("anthropic").enqueue(Wire.ANTHROPIC.answer("from anthropic"));
		failThrice("anthropic", 529);
		this.upstreams.server("azure").enqueue(Wire.AZURE_OPENAI.answer("from azure"));
		runner().run((context) -> {
			ChatResponse first = chat(context);
			assertThat(first.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(first.content()).isEqualTo("from openai");

			ChatResponse second = chat(context);
			assertThat(second.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(second.endpoint()).isEqualTo("anthropic");
			assertThat(second.content()).isEqualTo("from anthropic");
			assertThat(second.attempts()).extracting(Attempt::endpoint)
				.containsExactly("openai", "openai", "openai", "anthropic");

			ChatResponse third = chat(context);
			assertThat(third.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(third.endpoint()).isEqualTo("azure");
			assertThat(third.content()).isEqualTo("from azure");
			assertThat(third.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SERVER_ERROR,
					Outcome.SERVER_ERROR, Outcome.SERVER_ERROR, Outcome.SERVER_ERROR, Outcome.SERVER_ERROR,
					Outcome.SERVER_ERROR, Outcome.SUCCESS);

			assertThat(BreakerCalls.of(context, "openai")).isEqualTo(new BreakerCalls(7, 6, 1));
			assertThat(BreakerCalls.of(context, "anthropic")).isEqualTo(new BreakerCalls(4, 3, 1));
			assertThat(BreakerCalls.of(context, "azure")).isEqualTo(BreakerCalls.successes(1));
			BreakersDescriptor report = context.getBean(LlmBreakersEndpoint.class).breakers();
			assertThat(report.routes()).containsEntry("mixed", List.of("openai", "anthropic", "azure"));
			assertThat(report.endpoints().get("anthropic").breaker().failedCalls()).isEqualTo(3);
			assertThat(report.endpoints().get("azure").breaker().bufferedCalls()).isEqualTo(1);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(attempts(meters, "openai", "SERVER_ERROR")).isEqualTo(6);
			assertThat(attempts(meters, "anthropic", "SERVER_ERROR")).isEqualTo(3);
			assertThat(attempts(meters, "anthropic", "none")).isEqualTo(1);
			assertThat(attempts(meters, "azure.ai.openai", "none")).isEqualTo(1);
			assertThat(meters.get("llm.gateway.fallbacks").tags("llm.from", "anthropic", "llm.to", "azure").counter()
				.count()).isEqualTo(1);
		});
	}

	@Test
	void streamAnswersThroughEachProtocolInTurnAsTheEarlierOnesFail() {
		this.upstreams.server("openai").enqueue(sse(Wire.OPENAI.stream("from", " openai")));
		failThrice("openai", 503);
		failThrice("openai", 503);
		this.upstreams.server("anthropic").enqueue(sse(Wire.ANTHROPIC.stream("from", " anthropic")));
		for (int i = 0; i < 3; i++) {
			this.upstreams.server("anthropic").enqueue(sse(Wire.ANTHROPIC.streamStart() + Wire.ANTHROPIC.errorEvent()));
		}
		this.upstreams.server("azure").enqueue(sse(Wire.AZURE_OPENAI.stream("from", " azure")));
		runner().run((context) -> {
			assertThat(stream(context)).containsExactly(Map.entry("openai", Tier.PRIMARY));
			assertThat(stream(context)).containsExactly(Map.entry("anthropic", Tier.FALLBACK));
			assertThat(stream(context)).containsExactly(Map.entry("azure", Tier.FALLBACK));
			assertThat(BreakerCalls.of(context, "anthropic")).isEqualTo(new BreakerCalls(4, 3, 1));
			assertThat(this.upstreams.server("azure").getRequestCount()).isOne();
		});
	}

	@Test
	void streamCutOnOpenAiIsContinuedByAnthropicFromThePartialAnswer() throws Exception {
		this.upstreams.server("openai")
			.enqueue(sse(Ending.CUT, this.release, Wire.OPENAI.streamStart(), Wire.OPENAI.text("The answer is ")));
		this.upstreams.server("anthropic").enqueue(sse(Wire.ANTHROPIC.stream("forty-two.")));
		runner().withPropertyValues("llm.gateway.stream.resume-on-fallback=true").run((context) -> {
			List<ChatChunk> chunks = context.getBean(LlmGateway.class)
				.stream(ChatRequest.builder().user("Question?").route("mixed").build())
				.collectList()
				.block(WAIT);
			assertThat(chunks.stream().map(ChatChunk::content).collect(Collectors.joining()))
				.isEqualTo("The answer is forty-two.");
			assertThat(chunks).extracting(ChatChunk::endpoint).containsExactly("openai", "anthropic", "anthropic");
		});
		JsonNode continuation = JsonMapper.builder().build()
			.readTree(this.upstreams.server("anthropic").takeRequest().getBody().utf8());
		assertThat(continuation.get("messages").get(1).get("role").asString()).isEqualTo("assistant");
		assertThat(continuation.get("messages").get(1).get("content").asString()).isEqualTo("The answer is");
	}

	@Test
	void responsesFallsBackToChatCompletionsAndChatCompletionsToResponses() {
		failThrice("responses", 500);
		this.upstreams.server("openai").enqueue(Wire.OPENAI.answer("from openai"));
		failThrice("responses", 503);
		this.upstreams.server("openai").enqueue(sse(Wire.OPENAI.stream("from", " openai")));
		failThrice("openai", 500);
		this.upstreams.server("responses").enqueue(Wire.OPENAI_RESPONSES.answer("from responses"));
		failThrice("openai", 503);
		this.upstreams.server("responses").enqueue(sse(Wire.OPENAI_RESPONSES.stream("from", " responses")));
		runner().withPropertyValues("llm.routes.responses-first=responses,openai", "llm.routes.openai-first=openai,responses")
			.run((context) -> {
				ChatResponse toOpenAi = chat(context, "responses-first");
				assertThat(toOpenAi.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(toOpenAi.content()).isEqualTo("from openai");
				assertThat(toOpenAi.attempts()).extracting(Attempt::endpoint)
					.containsExactly("responses", "responses", "responses", "openai");
				assertThat(stream(context, "responses-first")).containsExactly(Map.entry("openai", Tier.FALLBACK));

				ChatResponse toResponses = chat(context, "openai-first");
				assertThat(toResponses.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(toResponses.endpoint()).isEqualTo("responses");
				assertThat(toResponses.content()).isEqualTo("from responses");
				assertThat(toResponses.usage()).isNotNull();
				assertThat(stream(context, "openai-first")).containsExactly(Map.entry("responses", Tier.FALLBACK));
				assertThat(BreakerCalls.of(context, "responses")).isEqualTo(new BreakerCalls(8, 6, 2));
				assertThat(attempts(context.getBean(MeterRegistry.class), "openai", "SERVER_ERROR")).isEqualTo(12);
			});
		assertThat(this.upstreams.server("responses").getRequestCount()).isEqualTo(8);
	}

	@Test
	void streamCutOnResponsesIsContinuedByChatCompletionsFromThePartialAnswer() throws Exception {
		this.upstreams.server("responses")
			.enqueue(sse(Ending.CUT, this.release, Wire.OPENAI_RESPONSES.streamStart(),
					Wire.OPENAI_RESPONSES.text("The answer is ")));
		this.upstreams.server("openai").enqueue(sse(Wire.OPENAI.stream("forty-two.")));
		runner().withPropertyValues("llm.gateway.stream.resume-on-fallback=true", "llm.routes.responses-first=responses,openai")
			.run((context) -> {
				List<ChatChunk> chunks = context.getBean(LlmGateway.class)
					.stream(ChatRequest.builder().user("Question?").route("responses-first").build())
					.collectList()
					.block(WAIT);
				assertThat(chunks.stream().map(ChatChunk::content).collect(Collectors.joining()))
					.isEqualTo("The answer is forty-two.");
				assertThat(chunks).extracting(ChatChunk::endpoint).containsOnly("responses", "openai");
			});
		JsonNode continuation = JsonMapper.builder().build()
			.readTree(this.upstreams.server("openai").takeRequest().getBody().utf8());
		assertThat(continuation.get("messages").get(1).get("role").asString()).isEqualTo("assistant");
		assertThat(continuation.get("messages").get(1).get("content").asString()).startsWith("The answer is");
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.withActuator().withPropertyValues("llm.routes.mixed=openai,anthropic,azure");
	}

	private void failThrice(String endpoint, int status) {
		Wire wire = switch (endpoint) {
			case "openai" -> Wire.OPENAI;
			case "responses" -> Wire.OPENAI_RESPONSES;
			default -> Wire.ANTHROPIC;
		};
		for (int i = 0; i < 3; i++) {
			this.upstreams.server(endpoint).enqueue(wire.error(status));
		}
	}

	private static ChatResponse chat(AssertableApplicationContext context) {
		return chat(context, "mixed");
	}

	private static ChatResponse chat(AssertableApplicationContext context, String route) {
		return context.getBean(LlmGateway.class)
			.chat(ChatRequest.builder().user("hello").route(route).build())
			.block(WAIT);
	}

	private static Map<String, Tier> stream(AssertableApplicationContext context) {
		return stream(context, "mixed");
	}

	// Who streamed the answer, and in which tier.
	private static Map<String, Tier> stream(AssertableApplicationContext context, String route) {
		List<ChatChunk> chunks = context.getBean(LlmGateway.class)
			.stream(ChatRequest.builder().user("hello").route(route).build())
			.collectList()
			.block(WAIT);
		assertThat(chunks.get(chunks.size() - 1).finishReason()).isEqualTo("stop");
		return chunks.stream().collect(Collectors.toMap(ChatChunk::endpoint, ChatChunk::tier, (a, b) -> a));
	}

	private static long attempts(MeterRegistry meters, String provider, String errorType) {
		return meters.get("gen_ai.client.operation.duration")
			.tag("gen_ai.provider.name", provider)
			.tag("error.type", errorType)
			.timers()
			.stream()
			.mapToLong(Timer::count)
			.sum();
	}

}
