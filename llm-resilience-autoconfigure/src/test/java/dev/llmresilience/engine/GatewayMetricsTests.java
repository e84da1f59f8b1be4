package dev.llmresilience.engine;

import java.time.Duration;
import java.util.UUID;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.within;

class GatewayMetricsTests {

	private final FakeUpstream upstreams;

	private final ApplicationContextRunner contextRunner;

	GatewayMetricsTests() throws Exception {
		this.upstreams = FakeUpstream.priced();
		this.contextRunner = this.upstreams.withMeters();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void successRecordsGenAiDurationTokensAndAPrimaryCall() {
		this.upstreams.primary().enqueue(Answers.completion("gpt-test-2026-01-01", "hi", 11, 7));
		this.contextRunner.run((context) -> {
			ChatResponse response = context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(10));
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(response.model()).isEqualTo("gpt-test-2026-01-01");
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			// the configured model: a value the provider chose is never a tag
			Timer duration = meters.get("gen_ai.client.operation.duration")
				.tag("gen_ai.operation.name", "chat")
				.tag("gen_ai.provider.name", "openai")
				.tag("gen_ai.request.model", "gpt-test")
				.tag("gen_ai.response.model", "gpt-test")
				.tag("llm.endpoint", "primary")
				.tag("error.type", "none")
				.timer();
			assertThat(duration.count()).isEqualTo(1);
			assertThat(meters.get("gen_ai.client.token.usage").tag("gen_ai.token.type", "input").summary().totalAmount())
				.isEqualTo(11);
			assertThat(meters.get("gen_ai.client.token.usage").tag("gen_ai.token.type", "output").summary().totalAmount())
				.isEqualTo(7);
			assertThat(meters.get("llm.gateway.calls")
				.tags("llm.route", "default", "llm.tier", "PRIMARY", "llm.outcome", "answered")
				.counter()
				.count()).isEqualTo(1);
			// 11 * 2.0 / 1e6 + 7 * 8.0 / 1e6
			assertThat(meters.get("llm.gateway.cost").tag("llm.endpoint", "primary").counter().count())
				.isCloseTo(0.000078, within(1e-12));
		});
	}

	@Test
	void fallbackRecordsEachFailedAttemptAndTheMoveToTheBackup() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(Answers.errorEchoing(503, FakeUpstream.PRICED_KEY));
		}
		this.upstreams.backup().enqueue(Answers.completion("small-test", "hi", 5, 2));
		this.contextRunner.run((context) -> {
			ChatResponse response = context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(10));
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("gen_ai.client.operation.duration")
				.tags("llm.endpoint", "primary", "error.type", "SERVER_ERROR")
				.timer()
				.count()).isEqualTo(3);
			assertThat(meters.get("gen_ai.client.operation.duration")
				.tags("llm.endpoint", "backup", "error.type", "none")
				.timer()
				.count()).isEqualTo(1);
			assertThat(meters.get("llm.gateway.fallbacks")
				.tags("llm.route", "default", "llm.from", "primary", "llm.to", "backup")
				.counter()
				.count()).isEqualTo(1);
			assertThat(meters.get("llm.gateway.calls").tags("llm.tier", "FALLBACK").counter().count()).isEqualTo(1);
			assertThat(meters.get("resilience4j.circuitbreaker.calls")
				.tags("name", "primary", "kind", "failed")
				.timer()
				.count()).isEqualTo(3);
			assertThat(meters.get("resilience4j.bulkhead.available.concurrent.calls").tag("name", "backup").gauge().value())
				.isEqualTo(50);
		});
	}

	@Test
	void failureRecordsBusyCallsAndCallerErrors() {
		// every answer names the key, the prompt and a new model: none of it may become a tag
		this.upstreams.primary().enqueue(Answers.completion(FakeUpstream.PRICED_KEY + " hello", "hi", 1, 1));
		this.upstreams.backup().enqueue(Answers.completion(UUID.randomUUID() + " hello", "hi", 1, 1));
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(Answers.errorEchoing(500, FakeUpstream.PRICED_KEY));
			this.upstreams.backup().enqueue(Answers.errorEchoing(500, FakeUpstream.PRICED_KEY));
		}
		this.upstreams.primary().enqueue(new mockwebserver3.MockResponse.Builder().code(400)
			.body("{\"error\":{\"message\":\"bad " + FakeUpstream.PRICED_KEY + " hello\",\"type\":\"" + FakeUpstream.PRICED_KEY
					+ "\",\"code\":\"" + FakeUpstream.PRICED_KEY + " hello\"}}")
			.build());
		this.contextRunner.withPropertyValues("llm.routes.backup-only=backup").run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			assertThat(gateway.chat("hello").block(Duration.ofSeconds(10)).model()).isEqualTo("[redacted] hello");
			assertThat(gateway.chat(ChatRequest.builder().user("hello").route("backup-only").build())
				.block(Duration.ofSeconds(10))
				.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(gateway.chat("hello").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.BUSY);
			assertThatExceptionOfType(LlmInvalidRequestException.class)
				.isThrownBy(() -> gateway.chat("hello").block(Duration.ofSeconds(10)));
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("llm.gateway.calls").tags("llm.tier", "BUSY", "llm.outcome", "busy").counter().count())
				.isEqualTo(1);
			assertThat(meters.get("llm.gateway.calls").tags("llm.tier", "NONE", "llm.outcome", "error").counter().count())
				.isEqualTo(1);
			assertThat(meters.getMeters()).isNotEmpty()
				.allSatisfy((meter) -> assertThat(meter.getId().getTags().toString()).doesNotContain("hello")
					.doesNotContain(FakeUpstream.PRICED_KEY));
			assertThat(meters.find("gen_ai.client.operation.duration").timers())
				.extracting((timer) -> timer.getId().getTag("gen_ai.response.model"))
				.containsOnly("gpt-test", "small-test");
		});
	}

}
