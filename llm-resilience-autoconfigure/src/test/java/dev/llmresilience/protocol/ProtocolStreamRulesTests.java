package dev.llmresilience.protocol;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers.Ending;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.RecordedAttempts;
import dev.llmresilience.support.Wire;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static dev.llmresilience.support.Answers.sse;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/failure-rules.md row by row for {@code stream}, once per protocol, over real local HTTP:
 * failures before the first text are retried and fall back unseen, failures after it reach the
 * caller with the partial text, and a stream is whole only at its protocol's end (or once the model
 * has sent its finish reason).
 */
class ProtocolStreamRulesTests {

	private static final Duration WAIT = Duration.ofSeconds(15);

	private final CountDownLatch release = new CountDownLatch(1);

	private FakeUpstream upstreams;

	@AfterEach
	void stop() {
		this.release.countDown();
		this.upstreams.close();
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void answerStreamsWithItsFinishReasonAndUsageOnTheLastChunk(Wire wire) throws Exception {
		start(wire).server("primary").enqueue(sse(wire.stream("Hello", " there", "!")));
		this.upstreams.runner().run((context) -> {
			List<ChatChunk> chunks = stream(context);
			assertThat(joined(chunks)).isEqualTo("Hello there!");
			assertThat(chunks).extracting(ChatChunk::tier).containsOnly(Tier.PRIMARY);
			ChatChunk last = chunks.get(chunks.size() - 1);
			assertThat(last.finishReason()).isEqualTo("stop");
			assertThat(last.usage()).isEqualTo(new Usage(5, 3));
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
		});
		RecordedRequest request = this.upstreams.server("primary").takeRequest();
		assertThat(request.getUrl().encodedPath()).isEqualTo(wire.path("primary"));
		assertThat(JsonMapper.builder().build().readTree(request.getBody().utf8()).get("stream").asBoolean()).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void streamWithNoTextIsAnEmptyResponseRetriedCountedThenFallsBack(Wire wire) {
		fallsBackAfterThree(wire, sse(wire.streamStart() + wire.finish((wire == Wire.ANTHROPIC) ? "end_turn" : "stop", 0)
				+ wire.end()), Outcome.EMPTY_RESPONSE);
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void eventThatIsNotJsonIsRetriedCountedThenFallsBack(Wire wire) {
		fallsBackAfterThree(wire, sse(wire.streamStart() + "data: {\"choices\": [\n\n"), Outcome.MALFORMED_RESPONSE);
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void errorStatusBeforeTheStreamIsRetriedCountedThenFallsBack(Wire wire) {
		fallsBackAfterThree(wire, wire.error(529), Outcome.SERVER_ERROR);
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void errorEventBeforeTheFirstTextIsRetriedCountedThenFallsBack(Wire wire) {
		fallsBackAfterThree(wire, sse(wire.streamStart() + wire.errorEvent()), Outcome.SERVER_ERROR);
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void cutBeforeTheFirstTextIsRetriedCountedThenFallsBack(Wire wire) {
		start(wire);
		for (int i = 0; i < 3; i++) {
			this.upstreams.server("primary").enqueue(sse(Ending.CUT, this.release, wire.streamStart()));
		}
		this.upstreams.server("backup").enqueue(sse(wire.stream("from", " backup")));
		runner().run((context) -> {
			assertThat(joined(stream(context))).isEqualTo("from backup");
			assertThat(context.getBean(RecordedAttempts.class).outcomes()).containsExactly(Outcome.CONNECTION_FAILED,
					Outcome.CONNECTION_FAILED, Outcome.CONNECTION_FAILED, Outcome.SUCCESS);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

	// Anthropic's message_start and ping are no token: a model that sends only them is not alive.
	@ParameterizedTest
	@EnumSource(Wire.class)
	void silenceBeforeTheFirstTextHitsTheFirstTokenTimeoutAndFallsBack(Wire wire) {
		start(wire).server("primary").enqueue(sse(Ending.STALL, this.release, wire.streamStart()));
		this.upstreams.server("backup").enqueue(sse(wire.stream("from", " backup")));
		runner().withPropertyValues("llm.endpoints.primary.first-token-timeout=300ms",
				"llm.endpoints.primary.retry.max-attempts=1").run((context) -> {
					assertThat(joined(stream(context))).isEqualTo("from backup");
					assertThat(context.getBean(RecordedAttempts.class).outcomes())
						.containsExactly(Outcome.TIMEOUT, Outcome.SUCCESS);
					assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(1));
				});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void contentFilterBeforeTheFirstTextIsNotRetriedNotCountedAndFallsBack(Wire wire) {
		start(wire).server("primary").enqueue(sse(wire.contentFilteredStream()));
		this.upstreams.server("backup").enqueue(sse(wire.stream("from", " backup")));
		runner().run((context) -> {
			List<ChatChunk> chunks = stream(context);
			assertThat(joined(chunks)).isEqualTo("from backup");
			assertThat(chunks).extracting(ChatChunk::tier).containsOnly(Tier.FALLBACK);
			assertThat(context.getBean(RecordedAttempts.class).outcomes())
				.containsExactly(Outcome.CONTENT_FILTERED, Outcome.SUCCESS);
			assertThat(this.upstreams.server("primary").getRequestCount()).isOne();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
		});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void errorEventAfterTheFirstTextReachesTheCallerWithThePartialText(Wire wire) {
		start(wire).server("primary").enqueue(sse(wire.streamStart() + wire.text("The answer") + wire.text(" is")
				+ wire.errorEvent()));
		interrupted(Outcome.STREAM_INTERRUPTED, "The answer is");
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void cutAfterTheFirstTextReachesTheCallerWithThePartialText(Wire wire) {
		start(wire).server("primary")
			.enqueue(sse(Ending.CUT, this.release, wire.streamStart(), wire.text("The answer"), wire.text(" is")));
		interrupted(Outcome.STREAM_INTERRUPTED, "The answer is");
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void silenceAfterTheFirstTextReachesTheCallerAsAStall(Wire wire) {
		start(wire).server("primary")
			.enqueue(sse(Ending.STALL, this.release, wire.streamStart(), wire.text("Once"), wire.text(" upon")));
		interrupted(Outcome.STREAM_STALLED, "Once upon", "llm.endpoints.primary.stream-idle-timeout=300ms");
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void bodyThatEndsAfterTheFinishReasonButBeforeTheEndIsAWholeAnswer(Wire wire) {
		start(wire).server("primary").enqueue(sse(Ending.CLEAN, this.release, wire.streamStart(), wire.text("Done"),
				wire.finish((wire == Wire.ANTHROPIC) ? "end_turn" : "stop", 1)));
		this.upstreams.runner().run((context) -> {
			List<ChatChunk> chunks = stream(context);
			assertThat(joined(chunks)).isEqualTo("Done");
			assertThat(chunks.get(chunks.size() - 1).finishReason()).isEqualTo("stop");
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
		});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void plainJsonAnswerToAStreamRequestIsAcceptedAsItIs(Wire wire) {
		start(wire).server("primary").enqueue(wire.answer("Whole at once"));
		this.upstreams.runner().run((context) -> {
			List<ChatChunk> chunks = stream(context);
			assertThat(joined(chunks)).isEqualTo("Whole at once");
			assertThat(chunks.get(chunks.size() - 1).finishReason()).isEqualTo("stop");
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
		});
	}

	private FakeUpstream start(Wire wire) {
		this.upstreams = FakeUpstream.start(wire);
		return this.upstreams;
	}

	private void fallsBackAfterThree(Wire wire, MockResponse failure, Outcome outcome) {
		start(wire);
		for (int i = 0; i < 3; i++) {
			this.upstreams.server("primary").enqueue(failure);
		}
		this.upstreams.server("backup").enqueue(sse(wire.stream("from", " backup")));
		runner().run((context) -> {
			List<ChatChunk> chunks = stream(context);
			assertThat(joined(chunks)).isEqualTo("from backup");
			assertThat(chunks).extracting(ChatChunk::endpoint).containsOnly("backup");
			assertThat(context.getBean(RecordedAttempts.class).outcomes())
				.containsExactly(outcome, outcome, outcome, Outcome.SUCCESS);
			assertThat(this.upstreams.server("primary").getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.runner().withBean(RecordedAttempts.class);
	}

	private void interrupted(Outcome outcome, String partial, String... properties) {
		this.upstreams.runner().withPropertyValues(properties).run((context) -> {
			StepVerifier.create(context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("Question?")))
				.expectNextCount(2)
				.expectErrorSatisfies((error) -> {
					assertThat(error).isInstanceOf(LlmStreamInterruptedException.class);
					LlmStreamInterruptedException interrupted = (LlmStreamInterruptedException) error;
					assertThat(interrupted.outcome()).isEqualTo(outcome);
					assertThat(interrupted.partial()).isEqualTo(partial);
					assertThat(interrupted.endpoint()).isEqualTo("primary");
				})
				.verify(WAIT);
			assertThat(this.upstreams.server("primary").getRequestCount()).isOne();
			assertThat(this.upstreams.server("backup").getRequestCount()).isZero();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(1));
		});
	}

	private static List<ChatChunk> stream(AssertableApplicationContext context) {
		return context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("Hi")).collectList().block(WAIT);
	}

	private static String joined(List<ChatChunk> chunks) {
		return chunks.stream().map(ChatChunk::content).collect(Collectors.joining());
	}

}
