package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmContextLengthExceededException;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmUnavailableException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.test.StepVerifier;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.Answers.recorded;
import static dev.llmresilience.support.FakeUpstream.PRIMARY_KEY;
import static dev.llmresilience.support.FakeUpstream.chat;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/failure-rules.md, the rows about HTTP error statuses: which are retried on the same endpoint,
 * which count against its breaker, and which fall back or reach the caller. Every test runs
 * against two local HTTP servers.
 */
@ExtendWith(OutputCaptureExtension.class)
class StatusRulesTests {

	private static final Duration WAIT = Duration.ofSeconds(10);

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@ParameterizedTest
	@ValueSource(ints = { 408, 409, 500, 502, 503, 529 })
	void serverErrorIsRetriedCountedThenFallsBack(int status) {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(error(status, "server_error"));
		}
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.SERVER_ERROR, Outcome.SERVER_ERROR, Outcome.SERVER_ERROR, Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

	@Test
	void rateLimitWithRetryAfterSecondsIsWaitedForThenRetried() {
		this.upstreams.primary().enqueue(rateLimited("Retry-After", "1"));
		this.upstreams.primary().enqueue(completion("after the wait"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(response.content()).isEqualTo("after the wait");
			assertThat(response.latency()).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.RATE_LIMITED, Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(new BreakerCalls(2, 1, 1));
		});
	}

	@Test
	void rateLimitWithRetryAfterHttpDateIsWaitedForThenRetried() {
		Instant now = Instant.parse("2026-03-01T12:00:00Z");
		String inOneSecond = DateTimeFormatter.RFC_1123_DATE_TIME.format(now.plusSeconds(1).atOffset(ZoneOffset.UTC));
		this.upstreams.primary().enqueue(rateLimited("Retry-After", inOneSecond));
		this.upstreams.primary().enqueue(completion("after the wait"));
		this.upstreams.runner()
			.withBean(UpstreamFailures.class, () -> new UpstreamFailures(Clock.fixed(now, ZoneOffset.UTC)))
			.run((context) -> {
				ChatResponse response = chat(context);
				assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
				assertThat(response.latency()).isBetween(Duration.ofSeconds(1), Duration.ofSeconds(5));
				assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
				assertThat(BreakerCalls.of(context, "primary")).isEqualTo(new BreakerCalls(2, 1, 1));
			});
	}

	@Test
	void rateLimitWithRetryAfterMillisIsWaitedForThenRetried() {
		this.upstreams.primary().enqueue(rateLimited("retry-after-ms", "300"));
		this.upstreams.primary().enqueue(completion("after the wait"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(response.latency()).isBetween(Duration.ofMillis(300), Duration.ofSeconds(5));
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(new BreakerCalls(2, 1, 1));
		});
	}

	@Test
	void rateLimitAskingForLongerThanMaxRetryAfterFallsBackAtOnce() {
		this.upstreams.primary().enqueue(rateLimited("Retry-After", "30"));
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.latency()).isLessThan(Duration.ofSeconds(5));
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.RATE_LIMITED, Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(1));
		});
	}

	@Test
	void rateLimitWithoutRetryAfterIsRetriedWithBackoffThenFallsBack() {
		for (int i = 0; i < 3; i++) {
			this.upstreams.primary().enqueue(error(429, "rate_limit_exceeded"));
		}
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

	@Test
	void invalidRequestIsNeitherRetriedNorCountedAndReachesTheCallerAsATypedError() {
		this.upstreams.primary().enqueue(recorded("openai/dotnet-record-400-invalid-function-parameters.json"));
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			StepVerifier.create(context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("hello")))
				.expectErrorSatisfies((error) -> assertThat(error).isInstanceOfSatisfying(LlmInvalidRequestException.class,
						(invalid) -> {
							assertThat(invalid.status()).isEqualTo(400);
							assertThat(invalid.code()).isEqualTo("invalid_function_parameters");
							assertThat(invalid.endpoint()).isEqualTo("primary");
							assertThat(invalid.getMessage()).contains("'additionalProperties' is required");
						}))
				.verify(WAIT);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
		});
	}

	@Test
	void contextLengthExceededIsNeitherRetriedNorCountedAndReachesTheCallerAsATypedError() {
		this.upstreams.primary().enqueue(json(400, """
				{"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages \
				resulted in 130017 tokens. Please reduce the length of the messages.", "type": "invalid_request_error", \
				"param": "messages", "code": "context_length_exceeded"}}"""));
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			StepVerifier.create(context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("a very long prompt")))
				.expectErrorSatisfies((error) -> assertThat(error)
					.isInstanceOfSatisfying(LlmContextLengthExceededException.class, (tooLong) -> {
						assertThat(tooLong.status()).isEqualTo(400);
						assertThat(tooLong.code()).isEqualTo("context_length_exceeded");
						assertThat(tooLong.getMessage()).contains("maximum context length is 128000 tokens");
					}))
				.verify(WAIT);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
		});
	}

	@Test
	void invalidApiKeyIsNotRetriedButCountedAndFallsBack() {
		this.upstreams.primary().enqueue(recorded("openai/dotnet-record-401-invalid-api-key.json"));
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.CONFIGURATION_ERROR, Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(1));
		});
	}

	@Test
	void invalidApiKeyIsLoggedAsAConfigurationProblemWithoutShowingTheKey(CapturedOutput output) {
		// OpenAI's 401 repeats the key it was sent, masked; a careless proxy repeats it whole
		String masked = PRIMARY_KEY.substring(0, 8) + "*".repeat(PRIMARY_KEY.length() - 12)
				+ PRIMARY_KEY.substring(PRIMARY_KEY.length() - 4);
		for (int i = 0; i < 2; i++) {
			this.upstreams.primary().enqueue(json(401, "{\"error\":{\"message\":\"Incorrect API key provided: " + masked
					+ " (Authorization: Bearer " + PRIMARY_KEY + ")\",\"type\":\"invalid_request_error\",\"code\":\""
					+ PRIMARY_KEY + "\"}}"));
		}
		String[] shown = { PRIMARY_KEY, masked, PRIMARY_KEY.substring(0, 12) };
		this.upstreams.runner()
			.withPropertyValues("llm.routes.default=primary", "llm.gateway.busy-as-error=true")
			.run((context) -> {
				List<Attempt> attempts = new CopyOnWriteArrayList<>();
				StepVerifier.create(endpoint(context, "primary").chat(ChatRequest.ofUser("hello"), attempts::add))
					.expectErrorSatisfies((error) -> {
						assertThat(error).isInstanceOfSatisfying(LlmUpstreamException.class,
								(upstream) -> assertThat(upstream.status()).isEqualTo(401));
						assertThat(error.getMessage()).contains("api-key", "Incorrect API key provided: [redacted]")
							.doesNotContain(shown);
						assertThat(error.toString()).doesNotContain(shown);
					})
					.verify(WAIT);
				StepVerifier.create(context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("hello")))
					.expectErrorSatisfies((error) -> {
						assertThat(error).isInstanceOf(LlmUnavailableException.class);
						assertThat(error.getMessage()).doesNotContain(shown);
						assertThat(((LlmUnavailableException) error).attempts()).extracting(Attempt::outcome)
							.containsExactly(Outcome.CONFIGURATION_ERROR);
						assertThat(((LlmUnavailableException) error).attempts().toString()).doesNotContain(shown);
					})
					.verify(WAIT);
				assertThat(attempts).extracting(Attempt::outcome).containsExactly(Outcome.CONFIGURATION_ERROR);
				assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
				assertThat(this.upstreams.primary().takeRequest().getHeaders().get("Authorization"))
					.isEqualTo("Bearer " + PRIMARY_KEY);
			});
		assertThat(output).contains("WARN").contains("Endpoint 'primary'").contains("api-key")
			.contains("Incorrect API key provided: [redacted]");
		assertThat(output.getAll()).doesNotContain(shown);
	}

	@ParameterizedTest
	@ValueSource(ints = { 403, 404 })
	void forbiddenOrNotFoundIsNotRetriedButCountedAndFallsBack(int status) {
		this.upstreams.primary().enqueue(error(status, (status == 403) ? "unsupported_country_region_territory"
				: "model_not_found"));
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.CONFIGURATION_ERROR, Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(1));
		});
	}

	private static MockResponse rateLimited(String header, String value) {
		return new MockResponse.Builder().code(429)
			.setHeader("Content-Type", "application/json")
			.setHeader(header, value)
			.body("{\"error\":{\"message\":\"Rate limit reached for requests\",\"type\":\"requests\",\"param\":null,"
					+ "\"code\":\"rate_limit_exceeded\"}}")
			.build();
	}

}
