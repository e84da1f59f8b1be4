package dev.llmresilience.protocol;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import static dev.llmresilience.support.Answers.DONE;
import static dev.llmresilience.support.Answers.content;
import static dev.llmresilience.support.Answers.role;
import static dev.llmresilience.support.Answers.sse;
import static dev.llmresilience.support.Answers.stream;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * One server-sent event is read up to the endpoint's {@code max-response-size}, like a whole body:
 * a provider cannot make the gateway hold an event of any size by never ending its line.
 */
class OversizedEventTests {

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

	@Test
	void anEventLargerThanMaxResponseSizeEndsTheAttemptAsMalformedAndTheBackupAnswers() {
		// 4 KB in one event, well inside max-stream-size and max-stream-events
		String oversized = role() + content("x".repeat(4096)) + DONE;
		this.upstreams.primary().enqueue(sse(oversized));
		this.upstreams.primary().enqueue(sse(oversized));
		this.upstreams.backup().enqueue(sse(stream("from ", "backup")));
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.max-response-size=1KB", "llm.defaults.retry.max-attempts=2")
			.run((context) -> {
				List<ChatChunk> chunks = context.getBean(LlmGateway.class).stream(ChatRequest.ofUser("hi"))
					.collectList()
					.block(WAIT);
				assertThat(chunks).allSatisfy((chunk) -> assertThat(chunk.tier()).isEqualTo(Tier.FALLBACK));
				assertThat(chunks.stream().map(ChatChunk::content).collect(Collectors.joining()))
					.isEqualTo("from backup");
				assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(2));

				this.upstreams.primary().enqueue(sse(oversized));
				this.upstreams.primary().enqueue(sse(oversized));
				List<Attempt> attempts = new CopyOnWriteArrayList<>();
				StepVerifier.create(endpoint(context, "primary").stream(ChatRequest.ofUser("hi"), attempts::add))
					.expectError()
					.verify(WAIT);
				assertThat(attempts).extracting(Attempt::outcome)
					.containsExactly(Outcome.MALFORMED_RESPONSE, Outcome.MALFORMED_RESPONSE);
			});
	}

}
