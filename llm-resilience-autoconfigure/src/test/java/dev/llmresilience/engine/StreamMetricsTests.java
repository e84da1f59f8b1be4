package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Streamed calls feed the same meters as plain ones: each attempt, its tokens, the call's tier and
 * the fallback.
 */
class StreamMetricsTests {

	private static final String STREAM = """
			data: {"model":"small-test","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}

			data: {"model":"small-test","choices":[{"index":0,"delta":{"content":"Hello"}}]}

			data: {"model":"small-test","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

			data: {"model":"small-test","choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3}}

			data: [DONE]

			""";

	private final FakeUpstream upstreams;

	private final ApplicationContextRunner contextRunner;

	StreamMetricsTests() throws Exception {
		this.upstreams = FakeUpstream.priced();
		this.contextRunner = this.upstreams.withMeters();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void aStreamThatFallsBackRecordsAttemptsTokensTheFallbackAndTheCall() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(Answers.errorEchoing(503, FakeUpstream.PRICED_KEY));
		}
		this.upstreams.backup().enqueue(new MockResponse.Builder().code(200)
			.setHeader("Content-Type", "text/event-stream")
			.body(STREAM)
			.build());
		this.contextRunner.run((context) -> {
			List<ChatChunk> chunks = context.getBean(LlmGateway.class)
				.stream(ChatRequest.ofUser("hello"))
				.collectList()
				.block(Duration.ofSeconds(10));
			assertThat(chunks).extracting(ChatChunk::content).containsExactly("Hello", "");
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("gen_ai.client.operation.duration")
				.tags("llm.endpoint", "primary", "error.type", "SERVER_ERROR")
				.timer()
				.count()).isEqualTo(3);
			assertThat(meters.get("gen_ai.client.operation.duration")
				.tags("llm.endpoint", "backup", "error.type", "none", "gen_ai.response.model", "small-test")
				.timer()
				.count()).isEqualTo(1);
			assertThat(meters.get("gen_ai.client.token.usage").tag("gen_ai.token.type", "output").summary().totalAmount())
				.isEqualTo(3);
			assertThat(meters.get("llm.gateway.calls").tags("llm.tier", "FALLBACK", "llm.outcome", "answered").counter().count())
				.isEqualTo(1);
			assertThat(meters.get("llm.gateway.fallbacks").tags("llm.from", "primary", "llm.to", "backup").counter().count())
				.isEqualTo(1);
			// 9 * 1.0 / 1e6 + 3 * 4.0 / 1e6
			assertThat(meters.get("llm.gateway.cost").tag("llm.endpoint", "backup").counter().count())
				.isCloseTo(0.000021, within(1e-12));
		});
	}

	@Test
	void aStreamNothingCanAnswerCountsAsBusy() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(Answers.errorEchoing(500, FakeUpstream.PRICED_KEY));
			this.upstreams.backup().enqueue(Answers.errorEchoing(500, FakeUpstream.PRICED_KEY));
		}
		this.contextRunner.run((context) -> {
			List<ChatChunk> chunks = context.getBean(LlmGateway.class)
				.stream(ChatRequest.ofUser("hello"))
				.collectList()
				.block(Duration.ofSeconds(10));
			assertThat(chunks).singleElement().satisfies((chunk) -> assertThat(chunk.tier().name()).isEqualTo("BUSY"));
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("llm.gateway.calls").tags("llm.tier", "BUSY", "llm.outcome", "busy").counter().count())
				.isEqualTo(1);
		});
	}

}
