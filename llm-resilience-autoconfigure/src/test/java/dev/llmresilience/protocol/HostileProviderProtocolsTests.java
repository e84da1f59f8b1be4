package dev.llmresilience.protocol;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.Wire;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static dev.llmresilience.support.Answers.sse;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The provider boundary holds whatever protocol an endpoint speaks: a stream's caps on events and
 * bytes, the whitespace kept before the first token, the token counts believed, and the provider
 * text redacted and cut, each against a real local server answering in the protocol's own words.
 */
class HostileProviderProtocolsTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private FakeUpstream upstreams;

	@AfterEach
	void stop() {
		if (this.upstreams != null) {
			this.upstreams.close();
		}
	}

	private ApplicationContextRunner runner(Wire wire, String... properties) {
		this.upstreams = FakeUpstream.start(wire);
		return this.upstreams.runner().withPropertyValues("llm.defaults.retry.max-attempts=1").withPropertyValues(properties);
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void floodOfEventsBeforeTheFirstTokenEndsTheAttemptAsMalformed(Wire wire) {
		ApplicationContextRunner runner = runner(wire, "llm.endpoints.primary.max-stream-events=40");
		String flood = wire.streamStart() + ": keep-alive\n\n".repeat(60) + wire.text("late") + wire.finish("stop", 1)
				+ wire.end();
		this.upstreams.server("primary").enqueue(sse(flood));
		runner.run((context) -> {
			List<Attempt> attempts = new CopyOnWriteArrayList<>();
			StepVerifier.create(endpoint(context, "primary").stream(ChatRequest.ofUser("hi"), attempts::add))
				.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(LlmUpstreamException.class)
					.hasMessageContaining("more than max-stream-events (40 events)"))
				.verify(WAIT);
			assertThat(attempts).extracting(Attempt::outcome).containsExactly(Outcome.MALFORMED_RESPONSE);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(1));
		});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void streamLargerThanMaxStreamSizeBreaksAfterTheFirstToken(Wire wire) {
		ApplicationContextRunner runner = runner(wire, "llm.endpoints.primary.max-stream-size=16KB");
		this.upstreams.server("primary")
			.enqueue(sse(wire.streamStart() + wire.text("Hello ") + wire.text("x".repeat(1000)).repeat(40)
					+ wire.finish("stop", 1) + wire.end()));
		runner.run((context) -> StepVerifier.create(context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("hi")))
			.thenConsumeWhile((chunk) -> true)
			.expectErrorSatisfies((error) -> {
				assertThat(error).isInstanceOf(LlmStreamInterruptedException.class)
					.hasMessageContaining("more than max-stream-size (16384 bytes)");
				assertThat(((LlmStreamInterruptedException) error).partial()).startsWith("Hello x");
			})
			.verify(WAIT));
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void whitespaceBeforeTheFirstTokenIsKeptUpToOneKilobyteAndANegativeCountIsIgnored(Wire wire) {
		ApplicationContextRunner runner = runner(wire);
		this.upstreams.server("primary")
			.enqueue(sse(wire.streamStart() + wire.text(" ".repeat(100)).repeat(30) + wire.text("Hello")
					+ wire.finish((wire == Wire.ANTHROPIC) ? "end_turn" : "stop", -7) + wire.end()));
		runner.run((context) -> {
			List<ChatChunk> chunks = context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("hi"))
				.collectList()
				.block(WAIT);
			assertThat(chunks.stream().map(ChatChunk::content).collect(Collectors.joining()))
				.isEqualTo(" ".repeat(StreamLimits.MAX_LEADING_WHITESPACE) + "Hello");
			assertThat(chunks.get(chunks.size() - 1).usage()).isEqualTo(new Usage(5, null));
		});
	}

	@Test
	void anthropicErrorOfMegabytesThatRepeatsTheKeyIsRedactedAndCut() {
		ApplicationContextRunner runner = runner(Wire.ANTHROPIC);
		String key = "sk-test-primary-0123456789";
		String filler = "y".repeat(2_000_000);
		this.upstreams.server("primary")
			.enqueue(Answers.json(400, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
					+ "\"message\":\"Key " + key + " is wrong " + filler + "\"}}"));
		runner.run((context) -> {
			LlmInvalidRequestException refused = catchThrowableOfType(LlmInvalidRequestException.class,
					() -> FakeUpstream.chat(context));
			assertThat(refused.getMessage()).doesNotContain(key)
				.contains("Key [redacted] is wrong yyy", "(cut from ")
				.hasSizeLessThan(1300);
		});
	}

}
