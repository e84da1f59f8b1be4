package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.StreamLimits;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.test.StepVerifier;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static dev.llmresilience.support.Answers.DONE;
import static dev.llmresilience.support.Answers.content;
import static dev.llmresilience.support.Answers.finish;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.Answers.role;
import static dev.llmresilience.support.Answers.sse;
import static dev.llmresilience.support.Answers.stream;
import static dev.llmresilience.support.Answers.usage;
import static dev.llmresilience.support.FakeUpstream.PRIMARY_KEY;
import static dev.llmresilience.support.FakeUpstream.chat;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * A provider that answers in ways meant to hurt, as a real local server: streams that never end
 * in size or in events, whitespace without end before the first token, token counts that would
 * lower or blow the day's spend, and error fields of megabytes that repeat the key. Each is bounded
 * or ignored, and every attempt it ends is a provider failure the breaker counts.
 */
@ExtendWith(OutputCaptureExtension.class)
class HostileProviderTests {

	private static final Duration WAIT = Duration.ofSeconds(20);

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.price.input-per-million=2",
					"llm.endpoints.primary.price.output-per-million=8", "llm.defaults.retry.max-attempts=2");
	}

	@Test
	void tooManyEventsBeforeTheFirstTokenEndTheAttemptAsMalformedAndTheBackupAnswers() {
		String flood = role() + content("").repeat(30) + ": keep-alive\n\n".repeat(30) + content("late") + DONE;
		this.upstreams.primary().enqueue(sse(flood));
		this.upstreams.primary().enqueue(sse(flood));
		this.upstreams.backup().enqueue(sse(stream("from ", "backup")));
		runner().withPropertyValues("llm.endpoints.primary.max-stream-events=50").run((context) -> {
			List<ChatChunk> chunks = context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("hi"))
				.collectList()
				.block(WAIT);
			assertThat(chunks).allSatisfy((chunk) -> assertThat(chunk.tier()).isEqualTo(Tier.FALLBACK));
			assertThat(text(chunks)).isEqualTo("from backup");
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(2));

			this.upstreams.primary().enqueue(sse(flood));
			this.upstreams.primary().enqueue(sse(flood));
			List<Attempt> attempts = new CopyOnWriteArrayList<>();
			StepVerifier.create(endpoint(context, "primary").stream(ChatRequest.ofUser("hi"), attempts::add))
				.expectErrorSatisfies((error) -> assertThat(error).isInstanceOf(LlmUpstreamException.class)
					.hasMessageContaining("more than max-stream-events (50 events)"))
				.verify(WAIT);
			assertThat(attempts).extracting(Attempt::outcome)
				.containsExactly(Outcome.MALFORMED_RESPONSE, Outcome.MALFORMED_RESPONSE);
		});
	}

	@Test
	void streamLargerThanMaxStreamSizeBreaksAfterTheFirstTokenWithThePartialText() {
		String huge = content("x".repeat(1000));
		this.upstreams.primary().enqueue(sse(role() + content("Hello ") + huge.repeat(40) + finish("stop") + DONE));
		runner().withPropertyValues("llm.endpoints.primary.max-stream-size=16KB").run((context) -> {
			StepVerifier.create(context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("hi")))
				.thenConsumeWhile((chunk) -> chunk.tier() == Tier.PRIMARY)
				.expectErrorSatisfies((error) -> {
					assertThat(error).isInstanceOf(LlmStreamInterruptedException.class)
						.hasMessageContaining("more than max-stream-size (16384 bytes)");
					LlmStreamInterruptedException broken = (LlmStreamInterruptedException) error;
					assertThat(broken.partial()).startsWith("Hello x").hasSizeLessThan(16 * 1024);
					assertThat(broken.outcome()).isEqualTo(Outcome.STREAM_INTERRUPTED);
				})
				.verify(WAIT);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(1));
		});
	}

	@Test
	void whitespaceBeforeTheFirstTokenIsKeptUpToOneKilobyte() {
		String blanks = content(" ".repeat(100)).repeat(200);
		this.upstreams.primary().enqueue(sse(role() + blanks + content("Hello") + finish("stop") + usage(3, 1) + DONE));
		runner().run((context) -> {
			List<ChatChunk> chunks = context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("hi"))
				.collectList()
				.block(WAIT);
			assertThat(text(chunks)).isEqualTo(" ".repeat(StreamLimits.MAX_LEADING_WHITESPACE) + "Hello");
			assertThat(chunks.get(chunks.size() - 1).finishReason()).isEqualTo("stop");
		});
	}

	@Test
	void negativeAndAbsurdTokenCountsAreIgnoredNotPricedAndLoggedOnce(CapturedOutput output) {
		this.upstreams.primary().enqueue(completion(-1_000_000, 2));
		this.upstreams.primary().enqueue(completion(1L << 40, 3));
		this.upstreams.primary().enqueue(sse(role() + content("Hi") + finish("stop") + usage(-50, 4) + DONE));
		runner().run((context) -> {
			ChatResponse negative = chat(context);
			assertThat(negative.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(negative.usage()).isEqualTo(new Usage(null, 2));
			assertThat(negative.cost()).isEqualByComparingTo("0.000016");
			ChatResponse absurd = chat(context);
			assertThat(absurd.tier()).as("an absurd count does not make the answer malformed").isEqualTo(Tier.PRIMARY);
			assertThat(absurd.usage()).isEqualTo(new Usage(null, 3));
			List<ChatChunk> streamed = context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("hi"))
				.collectList()
				.block(WAIT);
			assertThat(streamed.get(streamed.size() - 1).usage()).isEqualTo(new Usage(null, 4));
			assertThat(context.getBean(BudgetGuard.class).spentToday()).isEqualByComparingTo("0.000072");
		});
		assertThat(output.getOut().lines().filter((line) -> line.contains("which cannot be right"))).singleElement()
			.satisfies((line) -> assertThat(line).contains("WARN", "'primary'", "reported -1000000 prompt tokens"));
	}

	@Test
	void streamThatReportsUsageTwiceIsChargedOnce() {
		this.upstreams.primary()
			.enqueue(sse(role() + content("Hi") + usage(5, 1) + finish("stop") + usage(5, 2) + DONE));
		runner().run((context) -> {
			List<ChatChunk> chunks = context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("hi"))
				.collectList()
				.block(WAIT);
			assertThat(chunks.stream().filter((chunk) -> chunk.usage() != null)).singleElement()
				.satisfies((chunk) -> assertThat(chunk.usage()).isEqualTo(new Usage(5, 2)));
			assertThat(context.getBean(BudgetGuard.class).spentToday()).isEqualByComparingTo(new BigDecimal("0.000026"));
		});
	}

	@Test
	void errorFieldsOfMegabytesThatRepeatTheKeyAreRedactedAndCut() {
		String filler = "y".repeat(2_000_000);
		this.upstreams.primary()
			.enqueue(json(400, "{\"error\":{\"message\":\"Key " + PRIMARY_KEY + " is wrong " + filler + "\",\"type\":\""
					+ PRIMARY_KEY + filler + "\",\"code\":\"" + PRIMARY_KEY + "-" + filler + "\"}}"));
		runner().run((context) -> {
			LlmInvalidRequestException refused = catchThrowableOfType(LlmInvalidRequestException.class,
					() -> chat(context));
			assertThat(refused.code()).doesNotContain(PRIMARY_KEY).startsWith("[redacted]").hasSizeLessThan(1100);
			assertThat(refused.getMessage()).doesNotContain(PRIMARY_KEY)
				.contains("Key [redacted] is wrong yyy", "(cut from 2000046 characters)")
				.hasSizeLessThan(1300);
		});
	}

	private static mockwebserver3.MockResponse completion(long promptTokens, long completionTokens) {
		return json(200, "{\"model\":\"m\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
				+ "\"ok\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":" + promptTokens
				+ ",\"completion_tokens\":" + completionTokens + "}}");
	}

	private static String text(List<ChatChunk> chunks) {
		return chunks.stream().map(ChatChunk::content).collect(Collectors.joining());
	}

}
