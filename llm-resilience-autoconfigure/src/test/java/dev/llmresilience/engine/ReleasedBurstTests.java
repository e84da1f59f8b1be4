package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.FakeUpstream.Gate;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The burst an opening breaker releases is absorbed by the next endpoint (docs/liveness.md): 20
 * calls held by a hanging primary land at once on a backup with room for 5, and wait for its slots
 * (holding no thread) rather than be refused and answered BUSY; the wait is bounded by
 * {@code bulkhead.released-calls-wait}. Over real local HTTP; the backup answers each call in 50 ms.
 */
class ReleasedBurstTests {

	private static final int HELD = 20;

	private FakeUpstream upstreams;

	private final Gate hung = new Gate(completion("too late"));

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
		this.upstreams.primary().setDispatcher(this.hung);
	}

	@AfterEach
	void stop() {
		this.hung.open();
		this.upstreams.close();
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.first-token-timeout=60s", "llm.defaults.retry.max-attempts=1",
					"llm.endpoints.backup.bulkhead.max-concurrent-calls=5");
	}

	@Test
	void callsReleasedAtOnceWaitForTheBackupsSlotsAndAreAllAnswered() {
		this.upstreams.backup().setDispatcher(answeringAfter(Duration.ofMillis(50)));
		runner().run((context) -> {
			List<ChatResponse> answers = releaseHeldCalls(context);
			assertThat(answers).hasSize(HELD).allSatisfy((answer) -> {
				assertThat(answer.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(answer.content()).isEqualTo("from backup");
				assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.RELEASED,
						Outcome.SUCCESS);
			});
			assertThat(endpoint(context, "backup").bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(5);
		});
	}

	@Test
	void withNoWaitTheCallsTheBackupHasNoRoomForAreAnsweredBusy() {
		this.upstreams.backup().setDispatcher(answeringAfter(Duration.ofMillis(50)));
		runner().withPropertyValues("llm.endpoints.backup.bulkhead.released-calls-wait=0ms").run((context) -> {
			List<ChatResponse> answers = releaseHeldCalls(context);
			assertThat(answers.stream().filter((answer) -> answer.tier() == Tier.BUSY)).hasSizeGreaterThanOrEqualTo(10)
				.allSatisfy((answer) -> assertThat(answer.attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.RELEASED, Outcome.BULKHEAD_FULL));
		});
	}

	@Test
	void theWaitForASlotIsBoundedByReleasedCallsWait() {
		Gate backup = new Gate(completion("from backup"));
		this.upstreams.backup().setDispatcher(backup);
		runner().withPropertyValues("llm.endpoints.backup.bulkhead.released-calls-wait=300ms").run((context) -> {
			List<ChatResponse> answers = new CopyOnWriteArrayList<>();
			holdCalls(context, answers);
			endpoint(context, "primary").circuitBreaker().transitionToOpenState();
			// the backup's 5 slots stay taken: the other 15 wait 300 ms for one, then degrade
			await().atMost(Duration.ofSeconds(10)).until(() -> answers.size() == HELD - 5);
			assertThat(answers).allSatisfy((answer) -> {
				assertThat(answer.tier()).isEqualTo(Tier.BUSY);
				assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.RELEASED,
						Outcome.BULKHEAD_FULL);
				assertThat(answer.latency()).isLessThan(Duration.ofSeconds(3));
			});
			backup.open();
			await().atMost(Duration.ofSeconds(10)).until(() -> answers.size() == HELD);
		});
	}

	private List<ChatResponse> releaseHeldCalls(org.springframework.context.ApplicationContext context) {
		List<ChatResponse> answers = new CopyOnWriteArrayList<>();
		holdCalls(context, answers);
		// as an opening on the evidence of a hang does it
		endpoint(context, "primary").circuitBreaker().transitionToOpenState();
		await().atMost(Duration.ofSeconds(10)).until(() -> answers.size() == HELD);
		return answers;
	}

	private void holdCalls(org.springframework.context.ApplicationContext context, List<ChatResponse> answers) {
		LlmGateway gateway = context.getBean(LlmGateway.class);
		for (int i = 0; i < HELD; i++) {
			gateway.chat(ChatRequest.ofUser("held " + i)).subscribe(answers::add);
		}
		await().atMost(Duration.ofSeconds(10)).until(() -> this.upstreams.primary().getRequestCount() == HELD);
	}

	private static Dispatcher answeringAfter(Duration delay) {
		return new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
				Thread.sleep(delay.toMillis());
				return completion("from backup");
			}
		};
	}

}
