package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.FakeUpstream.Gate;
import mockwebserver3.MockWebServer;
import mockwebserver3.QueueDispatcher;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static dev.llmresilience.support.Answers.completion;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Per-request timeouts and deadlines, and the deadline's rules: no retry starts when what is left
 * of the deadline cannot fit it, while the route's next endpoint is always tried, with its timeouts
 * capped at what is left (a cut made by the deadline is not counted against its breaker). A slow
 * upstream is a {@link Gate} that never answers in time; time moves only in virtual time, so a
 * 60-second wait takes no time. The first-token timeout is set longer than the timeouts here, so
 * that each case is about the bound it names.
 */
class DeadlineTests {

	private static final Duration VERIFY = Duration.ofSeconds(10);

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
		this.upstreams.primary().setDispatcher(new Gate(completion("too late")));
	}

	@AfterEach
	void stop() {
		VirtualTimeScheduler.reset();
		this.upstreams.close();
	}

	/** One attempt per endpoint unless a test says otherwise: a retry's backoff also runs in virtual time. */
	private ApplicationContextRunner runner() {
		return this.upstreams.runner()
			.withPropertyValues("llm.defaults.retry.max-attempts=1", "llm.defaults.first-token-timeout=5m");
	}

	@Test
	void requestTimeoutOverridesTheEndpointTimeout() {
		this.upstreams.backup().enqueue(completion("from backup"));
		runner().run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			ChatRequest request = ChatRequest.builder().user("hello").timeout(Duration.ofSeconds(2)).build();
			StepVerifier.withVirtualTime(() -> gateway.chat(request))
				.expectSubscription()
				.then(() -> awaitRequest(this.upstreams.primary()))
				.thenAwait(Duration.ofSeconds(2))
				.assertNext((response) -> {
					assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
					assertThat(response.content()).isEqualTo("from backup");
					assertThat(response.attempts()).extracting(Attempt::outcome)
						.containsExactly(Outcome.TIMEOUT, Outcome.SUCCESS);
					assertThat(response.attempts().get(0).duration()).isEqualTo(Duration.ofSeconds(2));
				})
				.expectComplete()
				.verify(VERIFY);
		});
	}

	@Test
	void withoutARequestTimeoutTheEndpointTimeoutApplies() {
		this.upstreams.backup().enqueue(completion("from backup"));
		runner().withPropertyValues("llm.endpoints.primary.timeout=45s", "llm.endpoints.backup.timeout=30s").run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
				.expectSubscription()
				.then(() -> awaitRequest(this.upstreams.primary()))
				.expectNoEvent(Duration.ofSeconds(44))
				.thenAwait(Duration.ofSeconds(1))
				.assertNext((response) -> {
					assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
					assertThat(response.attempts().get(0).outcome()).isEqualTo(Outcome.TIMEOUT);
					assertThat(response.attempts().get(0).duration()).isEqualTo(Duration.ofSeconds(45));
				})
				.expectComplete()
				.verify(VERIFY);
		});
	}

	@Test
	void requestDeadlineOverridesTheGatewayDeadline() {
		runner().withPropertyValues("llm.gateway.deadline=5s").run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			ChatRequest request = ChatRequest.builder().user("hello").deadline(Duration.ofSeconds(8)).build();
			StepVerifier.withVirtualTime(() -> gateway.chat(request))
				.expectSubscription()
				.then(() -> awaitRequest(this.upstreams.primary()))
				.expectNoEvent(Duration.ofSeconds(5))
				.thenAwait(Duration.ofSeconds(3))
				.assertNext((response) -> {
					assertThat(response.tier()).isEqualTo(Tier.BUSY);
					assertThat(response.latency()).isEqualTo(Duration.ofSeconds(8));
				})
				.expectComplete()
				.verify(VERIFY);
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
		});
	}

	@Test
	void shorterRequestDeadlineEndsTheCallBeforeTheEndpointTimeout() {
		runner().run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			ChatRequest request = ChatRequest.builder().user("hello").deadline(Duration.ofSeconds(3)).build();
			StepVerifier.withVirtualTime(() -> gateway.chat(request))
				.expectSubscription()
				.then(() -> awaitRequest(this.upstreams.primary()))
				.thenAwait(Duration.ofSeconds(3))
				.assertNext((response) -> {
					assertThat(response.tier()).isEqualTo(Tier.BUSY);
					assertThat(response.latency()).isEqualTo(Duration.ofSeconds(3));
				})
				.expectComplete()
				.verify(VERIFY);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
		});
	}

	@Test
	void deadlineThatCannotFitTheBackupsTimeoutStillTriesTheBackupWithWhatIsLeft() {
		this.upstreams.backup().enqueue(completion("from backup"));
		runner().withPropertyValues("llm.gateway.deadline=10s", "llm.endpoints.primary.timeout=8s",
				"llm.endpoints.backup.timeout=5s")
			.run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
					.expectSubscription()
					.then(() -> awaitRequest(this.upstreams.primary()))
					.thenAwait(Duration.ofSeconds(8))
					.assertNext((response) -> {
						assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
						assertThat(response.content()).isEqualTo("from backup");
						assertThat(response.attempts()).extracting(Attempt::outcome)
							.containsExactly(Outcome.TIMEOUT, Outcome.SUCCESS);
					})
					.expectComplete()
					.verify(VERIFY);
				assertThat(this.upstreams.backup().getRequestCount()).isOne();
			});
	}

	@Test
	void backupCutShortByTheDeadlineAnswersBusyWhenTheDeadlineRunsOutAndIsNotCountedAgainstItsBreaker() {
		this.upstreams.backup().setDispatcher(new Gate(completion("too late")));
		runner().withPropertyValues("llm.gateway.deadline=10s", "llm.endpoints.primary.timeout=8s",
				"llm.endpoints.backup.timeout=5s")
			.run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
					.expectSubscription()
					.then(() -> awaitRequest(this.upstreams.primary()))
					.thenAwait(Duration.ofSeconds(8))
					.then(() -> awaitRequest(this.upstreams.backup()))
					.expectNoEvent(Duration.ofMillis(1999))
					.thenAwait(Duration.ofMillis(1))
					.assertNext((response) -> {
						assertThat(response.tier()).isEqualTo(Tier.BUSY);
						assertThat(response.attempts()).extracting(Attempt::endpoint).containsExactly("primary", "backup");
						assertThat(response.attempts()).extracting(Attempt::outcome)
							.containsExactly(Outcome.TIMEOUT, Outcome.DEADLINE_EXCEEDED);
						assertThat(response.latency()).isEqualTo(Duration.ofSeconds(10));
					})
					.expectComplete()
					.verify(VERIFY);
				assertThat(BreakerCalls.of(context, "backup")).isEqualTo(BreakerCalls.NONE);
				assertThat(BreakerCalls.of(context, "primary"))
					.isEqualTo(BreakerCalls.failures(1));
			});
	}

	@Test
	void retryThatCannotFitTheRemainingDeadlineDoesNotStartButAFallbackThatFitsDoes() {
		this.upstreams.backup().enqueue(completion("from backup"));
		runner().withPropertyValues("llm.gateway.deadline=10s", "llm.endpoints.primary.timeout=6s",
				"llm.endpoints.primary.retry.max-attempts=3", "llm.endpoints.backup.timeout=3s")
			.run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
					.expectSubscription()
					.then(() -> awaitRequest(this.upstreams.primary()))
					.thenAwait(Duration.ofSeconds(6))
					// the retry's backoff (initial-backoff 1ms, max-backoff 4ms)
					.thenAwait(Duration.ofMillis(4))
					.assertNext((response) -> {
						assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
						assertThat(response.content()).isEqualTo("from backup");
						assertThat(response.attempts()).extracting(Attempt::endpoint)
							.containsExactly("primary", "primary", "backup");
						assertThat(response.attempts()).extracting(Attempt::outcome)
							.containsExactly(Outcome.TIMEOUT, Outcome.DEADLINE_EXCEEDED, Outcome.SUCCESS);
					})
					.expectComplete()
					.verify(VERIFY);
				assertThat(this.upstreams.primary().getRequestCount()).isOne();
				assertThat(this.upstreams.backup().getRequestCount()).isOne();
			});
	}

	@Test
	void firstAttemptStartsEvenWhenItsTimeoutIsLongerThanTheDeadline() {
		this.upstreams.primary().setDispatcher(new QueueDispatcher());
		this.upstreams.primary().enqueue(completion("quick"));
		runner().withPropertyValues("llm.gateway.deadline=5s").run((context) -> {
			assertThat(FakeUpstream.chat(context).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
		});
	}

	private static void awaitRequest(MockWebServer server) {
		try {
			assertThat(server.takeRequest(10, TimeUnit.SECONDS)).as("request received").isNotNull();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
