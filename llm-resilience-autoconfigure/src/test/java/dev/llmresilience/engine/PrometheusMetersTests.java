package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import mockwebserver3.MockResponse;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The meters as Prometheus sees them, through Boot's own metrics and observation auto-configuration
 * (so the observations become timers too, as in an application with Actuator). Prometheus takes
 * one set of tag keys per meter name: a meter registered first with fewer keys would make every
 * later, fuller one fail to register, silently but for one WARN.
 */
class PrometheusMetersTests {

	private final FakeUpstream upstreams;

	private final ApplicationContextRunner contextRunner;

	PrometheusMetersTests() throws Exception {
		this.upstreams = FakeUpstream.priced();
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
					CompositeMeterRegistryAutoConfiguration.class, PrometheusMetricsExportAutoConfiguration.class,
					LlmAutoConfiguration.class, LlmMetricsAutoConfiguration.class))
			.withPropertyValues(this.upstreams.properties("llm.gateway.fallback-cache.enabled=true"));
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void answeredCallsStillShowAfterABusyAnswerCameFirst() {
		failEveryAttemptOfOneCall(500);
		this.upstreams.primary().enqueue(Answers.completion("gpt-test", "hi", 3, 1));
		this.contextRunner.run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			assertThat(gateway.chat("first").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.BUSY);
			assertThat(gateway.chat("second").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.PRIMARY);
			List<String> calls = series(context, "llm_gateway_call_seconds_count{", 2);
			assertThat(calls).anySatisfy((line) -> assertThat(line).contains("llm_tier=\"BUSY\"")
				.contains("llm_endpoint=\"none\"")
				.endsWith(" 1"));
			assertThat(calls).anySatisfy((line) -> assertThat(line).contains("llm_tier=\"PRIMARY\"")
				.contains("llm_endpoint=\"primary\"")
				.endsWith(" 1"));
		});
	}

	@Test
	void answeredCallsStillShowAfterAnErrorCameFirst() {
		this.upstreams.primary().enqueue(Answers.errorEchoing(400, FakeUpstream.PRICED_KEY));
		this.upstreams.primary().enqueue(Answers.completion("gpt-test", "hi", 3, 1));
		this.contextRunner.run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			assertThatExceptionOfType(LlmInvalidRequestException.class)
				.isThrownBy(() -> gateway.chat("first").block(Duration.ofSeconds(10)));
			assertThat(gateway.chat("second").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.PRIMARY);
			List<String> calls = series(context, "llm_gateway_call_seconds_count{", 2);
			assertThat(calls).anySatisfy((line) -> assertThat(line).contains("llm_tier=\"NONE\"")
				.contains("error=\"LlmInvalidRequestException\""));
			assertThat(calls).anySatisfy((line) -> assertThat(line).contains("llm_tier=\"PRIMARY\"")
				.contains("llm_endpoint=\"primary\""));
		});
	}

	/**
	 * Every kind of answer and attempt, in an order that registers the sparsest shapes first: not one
	 * meter may fail to register, and every meter family shows.
	 */
	@Test
	void everyShapeOfCallAndAttemptRegistersItsMeters() {
		this.contextRunner.run((context) -> {
			PrometheusMeterRegistry prometheus = context.getBean(PrometheusMeterRegistry.class);
			List<String> failures = new CopyOnWriteArrayList<>();
			prometheus.config().onMeterRegistrationFailed((id, reason) -> failures.add(id.getName() + ": " + reason));
			LlmGateway gateway = context.getBean(LlmGateway.class);

			failEveryAttemptOfOneCall(503);
			assertThat(gateway.chat(ChatRequest.builder().user("report").deferrable(true).build())
				.block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.DEFERRED);
			failEveryAttemptOfOneCall(500);
			assertThat(gateway.chat("busy").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.BUSY);
			this.upstreams.primary().enqueue(Answers.errorEchoing(400, FakeUpstream.PRICED_KEY));
			assertThatExceptionOfType(LlmInvalidRequestException.class)
				.isThrownBy(() -> gateway.chat("invalid").block(Duration.ofSeconds(10)));
			this.upstreams.primary().enqueue(Answers.completion("gpt-test", "hi", 3, 1));
			assertThat(gateway.chat("cache me").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.PRIMARY);
			failEveryAttemptOfOneCall(502);
			assertThat(gateway.chat("cache me").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.CACHED);
			this.upstreams.primary().enqueue(Answers.errorEchoing(401, FakeUpstream.PRICED_KEY)); // not retried
			this.upstreams.backup().enqueue(Answers.completion("small-test", "hi", 3, 1));
			assertThat(gateway.chat("fallback").block(Duration.ofSeconds(10)).tier()).isEqualTo(Tier.FALLBACK);
			this.upstreams.primary().enqueue(new MockResponse.Builder().code(200)
				.setHeader("Content-Type", "text/event-stream")
				.body("data: {\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"
						+ "data: {\"model\":\"gpt-test\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
						+ "\"usage\":{\"prompt_tokens\":2,\"completion_tokens\":1}}\n\ndata: [DONE]\n\n")
				.build());
			assertThat(gateway.stream(ChatRequest.ofUser("stream")).collectList().block(Duration.ofSeconds(10)))
				.extracting(ChatChunk::tier)
				.containsOnly(Tier.PRIMARY);
			context.getBean(EndpointRegistry.class).endpoints()
				.forEach((endpoint) -> endpoint.circuitBreaker().transitionToForcedOpenState());
			ChatResponse open = gateway.chat("open").block(Duration.ofSeconds(10));
			assertThat(open.tier()).isEqualTo(Tier.BUSY);

			// the seven chat calls above, once the last observation has stopped
			await().atMost(Duration.ofSeconds(5))
				.until(() -> prometheus.get("llm.gateway.call").timers().stream().mapToLong((timer) -> timer.count()).sum() >= 7);
			assertThat(failures).isEmpty();
			String scrape = prometheus.scrape();
			assertThat(scrape).contains("gen_ai_client_operation_duration_seconds_count{",
					"gen_ai_client_token_usage_tokens_count{", "gen_ai_client_operation_seconds_count{",
					"llm_gateway_call_seconds_count{", "llm_gateway_calls_total{", "llm_gateway_fallbacks_total{",
					"llm_gateway_cost_total{", "llm_gateway_deferred_pending ",
					"resilience4j_circuitbreaker_state{");
			assertThat(scrape.lines().filter((line) -> line.startsWith("gen_ai_") || line.startsWith("llm_")))
				.as("no doubled underscore in a meter name")
				.noneMatch((line) -> line.substring(0, line.indexOf(' ')).split("\\{")[0].contains("__"));
		});
	}

	private void failEveryAttemptOfOneCall(int status) {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(Answers.errorEchoing(status, FakeUpstream.PRICED_KEY));
			this.upstreams.backup().enqueue(Answers.errorEchoing(status, FakeUpstream.PRICED_KEY));
		}
	}

	/**
	 * The series of a meter once it has as many as expected, or as many as it got: the gateway
	 * stops a call's observation just after the caller has the answer, so its timer may lag behind.
	 */
	private static List<String> series(AssertableApplicationContext context, String prefix, int expected) {
		PrometheusMeterRegistry registry = context.getBean(PrometheusMeterRegistry.class);
		Supplier<List<String>> series = () -> registry.scrape().lines().filter((line) -> line.startsWith(prefix)).toList();
		try {
			await().atMost(Duration.ofSeconds(5)).until(() -> series.get().size() >= expected);
		}
		catch (ConditionTimeoutException ex) {
			// the assertions that follow say what is missing
		}
		return series.get();
	}

}
