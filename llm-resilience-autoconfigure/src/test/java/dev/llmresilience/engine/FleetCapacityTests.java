package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.LlmBreakersEndpoint.BreakersDescriptor;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.RateLimitedProvider;
import dev.llmresilience.support.Wire;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.answering;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * A provider's rate limit is its API key's, not a replica's: with shared state on a real Redis,
 * replicas behind a round robin keep a configured requests-per-minute for the fleet, and a 429 or
 * headers saying a window is spent, received by one replica, stop the others from sending into it
 * until its reset, and the retry budget's floor is the fleet's (docs/capacity.md, "A fleet of
 * replicas").
 */
class FleetCapacityTests {

	@RegisterExtension
	final RedisFleet redis = new RedisFleet();

	private final MockWebServer primary = new MockWebServer();

	private final MockWebServer backup = new MockWebServer();

	@BeforeEach
	void start() throws Exception {
		this.backup.setDispatcher(answering("from backup"));
		this.primary.start();
		this.backup.start();
	}

	@AfterEach
	void stop() {
		this.primary.close();
		this.backup.close();
	}

	private List<ApplicationContextRunner> fleet(int replicas, String... properties) {
		List<ApplicationContextRunner> runners = new ArrayList<>();
		for (String name : List.of("a", "b", "c").subList(0, replicas)) {
			runners.add(this.redis.replica(name, "llm.endpoints.primary.base-url=" + this.primary.url("/v1"),
					"llm.endpoints.primary.model=primary-model", "llm.endpoints.backup.base-url=" + this.backup.url("/v1"),
					"llm.endpoints.backup.model=backup-model", "llm.endpoints.backup.priority=1",
					"llm.defaults.retry.max-attempts=1", "management.endpoints.web.exposure.include=llmbreakers")
				.withPropertyValues(properties));
		}
		return runners;
	}

	@Test
	void threeReplicasSendAConfiguredRequestsPerMinuteInAll() {
		// the fleet's minutes are the clock's: the 12 calls must not straddle one's end
		RedisServerSupport.clearOf(ChronoUnit.MINUTES, Duration.ofSeconds(30));
		this.primary.setDispatcher(answering("from primary"));
		Replicas.run(fleet(3, "llm.endpoints.primary.rate-limits.requests-per-minute=6"), (replicas) -> {
			int fromPrimary = 0;
			for (int i = 0; i < 12; i++) {
				ChatResponse answer = chat(replicas.get(i % 3));
				assertThat(answer.tier()).isIn(Tier.PRIMARY, Tier.FALLBACK);
				fromPrimary += (answer.tier() == Tier.PRIMARY) ? 1 : 0;
			}
			assertThat(this.primary.getRequestCount()).as("requests the fleet sent the primary").isEqualTo(6);
			assertThat(fromPrimary).isEqualTo(6);
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
					CapacityDescriptor.Window requests = capacity(replica).requests();
					assertThat(requests.limit()).isEqualTo(6);
					assertThat(requests.remaining()).as("the fleet's").isZero();
					assertThat(requests.source()).isEqualTo("CONFIGURED");
				});
			}
		});
	}

	@Test
	void twoReplicasSendAConfiguredTokensPerMinuteInAll() {
		RedisServerSupport.clearOf(ChronoUnit.MINUTES, Duration.ofSeconds(30));
		// each call is estimated at 102 tokens (the prompt's few and max_tokens 96) and costs that; 5 take
		// 510, and the last 10 may sit in the other replica's stock of permits
		this.primary.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return Answers.completion("primary-model", "from primary", 6, 96);
			}
		});
		Replicas.run(fleet(2, "llm.endpoints.primary.rate-limits.tokens-per-minute=520"), (replicas) -> {
			int fromPrimary = 0;
			for (int i = 0; i < 10; i++) {
				ChatResponse answer = chat(replicas.get(i % 2), costing(96));
				assertThat(answer.tier()).isIn(Tier.PRIMARY, Tier.FALLBACK);
				fromPrimary += (answer.tier() == Tier.PRIMARY) ? 1 : 0;
			}
			// each replica's own count would let 10 through; the fleet's lets 5, and a call more per
			// replica when that replica sent it before hearing of the other's last
			assertThat(this.primary.getRequestCount()).as("requests the fleet sent the primary").isBetween(5, 7);
			assertThat(fromPrimary).isEqualTo(this.primary.getRequestCount());
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
					CapacityDescriptor.Window tokens = capacity(replica).tokens();
					assertThat(tokens.limit()).isEqualTo(520);
					assertThat(tokens.remaining()).as("the fleet's").isLessThan(102);
					assertThat(tokens.source()).isEqualTo("CONFIGURED");
				});
			}
		});
	}

	@Test
	void theFleetsTokensAreSettledByTheUsageItsAnswersReport() {
		RedisServerSupport.clearOf(ChronoUnit.MINUTES, Duration.ofSeconds(30));
		// estimated at 102 tokens, each call costs 51: the rest goes back to the fleet
		this.primary.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return Answers.completion("primary-model", "from primary", 6, 45);
			}
		});
		Replicas.run(fleet(2, "llm.endpoints.primary.rate-limits.tokens-per-minute=520"), (replicas) -> {
			for (int i = 0; i < 14; i++) {
				chat(replicas.get(i % 2), costing(96));
			}
			// without the settling 5 to 7 calls would be sent; with it, as many as leave room for one more
			// estimate (9), and a call more per replica as above
			assertThat(this.primary.getRequestCount()).as("requests the fleet sent the primary").isBetween(9, 11);
		});
	}

	private static ChatRequest costing(int maxTokens) {
		return ChatRequest.builder().user("hello").maxTokens(maxTokens).build();
	}

	@Test
	void aRateLimitOneReplicaReceivesKeepsTheOthersFromTheProviderUntilItsReset() {
		AtomicInteger calls = new AtomicInteger();
		this.primary.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return (calls.incrementAndGet() == 1)
						? Answers.error(429, "rate_limit_exceeded").newBuilder().setHeader("retry-after", "30").build()
						: Answers.completion("from primary");
			}
		});
		Replicas.run(fleet(3), (replicas) -> {
			ChatResponse first = chat(replicas.get(0));
			assertThat(first.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
				.containsExactly(tuple("primary", Outcome.RATE_LIMITED), tuple("backup", Outcome.SUCCESS));
			for (ApplicationContext other : replicas.subList(1, 3)) {
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(capacity(other).requests()).isNotNull()
						.extracting(CapacityDescriptor.Window::remaining)
						.isEqualTo(0L));
				ChatResponse answer = chat(other);
				assertThat(answer.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
					.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED), tuple("backup", Outcome.SUCCESS));
				assertThat(capacity(other).requests().reset()).as("the 429's wait")
					.isBetween(Clock.systemUTC().instant().plusSeconds(20), Clock.systemUTC().instant().plusSeconds(31));
			}
			assertThat(this.primary.getRequestCount()).as("only the call that received the 429").isOne();
		});
	}

	@Test
	void aWindowTheHeadersSaidIsSpentIsSpentForTheWholeFleet() {
		RateLimitedProvider limited = new RateLimitedProvider(Wire.OPENAI, 3, Duration.ofSeconds(60), System::nanoTime,
				Clock.systemUTC());
		this.primary.setDispatcher(limited);
		Replicas.run(fleet(2), (replicas) -> {
			// a, b, a: each answer's headers say what is left, the third's that nothing is
			for (int i = 0; i < 3; i++) {
				assertThat(chat(replicas.get(i % 2)).tier()).isEqualTo(Tier.PRIMARY);
			}
			// b last heard that 1 was left: it hears from a that the window is spent
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(capacity(replicas.get(1)).requests().remaining()).isZero());
			for (int i = 0; i < 4; i++) {
				ChatResponse answer = chat(replicas.get(i % 2));
				assertThat(answer.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
					.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED), tuple("backup", Outcome.SUCCESS));
			}
			assertThat(limited.received()).isEqualTo(3);
			assertThat(limited.refused()).as("429s").isZero();
		});
	}

	@Test
	void aRetryBudgetsFloorIsSharedAmongTheReplicasAlive() {
		this.primary.setDispatcher(answering("from primary"));
		// 3 retries a second beyond the 20 %: 180 a minute for the fleet, 60 for each of three replicas
		Replicas.run(fleet(3, "llm.defaults.retry.budget-min-per-second=3"), (replicas) -> {
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
					BreakersDescriptor report = replica.getBean(LlmBreakersEndpoint.class).breakers();
					assertThat(report.sharedState().replicas()).isEqualTo(3);
					assertThat(capacity(replica).retryBudget().left()).isEqualTo(60);
					assertThat(capacity(replica).retryBudget().minPerSecond()).as("the fleet's, as configured").isEqualTo(3);
				});
			}
		});
	}

	private static CapacityDescriptor capacity(ApplicationContext context) {
		return context.getBean(LlmBreakersEndpoint.class).breaker("primary").capacity();
	}


}
