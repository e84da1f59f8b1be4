package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.gateway.LlmGatewayListener;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.FakeUpstream.Gate;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.sse;
import static dev.llmresilience.support.Answers.stream;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Hedged requests (docs/hedging.md) over real local HTTP, in virtual time: an endpoint
 * that brings no first token within the hedge delay has the same request sent to the route's next
 * endpoint; the first to bring a token wins and the other is cancelled (for a stream, before the
 * caller saw any of its chunks); the loser is a slow call for its breaker, never a failure; the
 * budget caps the hedged share of calls; an adaptive delay follows the endpoint's first-token times.
 */
class HedgingTests {

	private static final Duration VERIFY = Duration.ofSeconds(15);

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		VirtualTimeScheduler.reset();
		this.upstreams.close();
	}

	// hedged after a fixed second; every call may be hedged
	private ApplicationContextRunner hedging(String... more) {
		return this.upstreams.runner()
			.withPropertyValues("llm.gateway.hedge.enabled=true", "llm.gateway.hedge.adaptive=false",
					"llm.gateway.hedge.delay=1s", "llm.gateway.hedge.max-ratio=1")
			.withPropertyValues(more);
	}

	@Test
	void slowFirstTokenIsHedgedOnTheNextEndpointWhichWinsAndTheLoserIsASlowCall() {
		Gate held = new Gate(completion("too late"));
		this.upstreams.primary().setDispatcher(held);
		this.upstreams.backup().enqueue(completion("from backup"));
		hedging().run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
				.expectSubscription()
				.then(() -> awaitRequests(this.upstreams.primary(), 1))
				.expectNoEvent(Duration.ofMillis(999))
				.then(() -> assertThat(this.upstreams.backup().getRequestCount()).isZero())
				.thenAwait(Duration.ofMillis(1))
				.assertNext((answer) -> {
					assertThat(answer.tier()).isEqualTo(Tier.FALLBACK);
					assertThat(answer.endpoint()).isEqualTo("backup");
					assertThat(answer.content()).isEqualTo("from backup");
					assertThat(answer.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
						.containsExactly(tuple("primary", Outcome.HEDGE_LOST), tuple("backup", Outcome.SUCCESS));
					assertThat(answer.attempts().get(0).duration()).isEqualTo(Duration.ofSeconds(1));
					assertThat(answer.latency()).isEqualTo(Duration.ofSeconds(1));
				})
				.expectComplete()
				.verify(VERIFY);
			CircuitBreaker.Metrics primary = endpoint(context, "primary").circuitBreaker().getMetrics();
			assertThat(primary.getNumberOfSlowSuccessfulCalls()).as("the loser is a slow call").isOne();
			assertThat(primary.getNumberOfFailedCalls()).as("never a failure").isZero();
			assertThat(BreakerCalls.of(context, "backup")).isEqualTo(BreakerCalls.successes(1));
			assertThat(endpoint(context, "primary").bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(50);
			assertThat(context.getBean(Hedging.class).report().get("default").hedgeWon()).isOne();
			held.open();
		});
	}

	@Test
	void firstTokenWithinTheDelayIsNeverHedged() {
		this.upstreams.primary().enqueue(completion("from primary"));
		hedging().run((context) -> {
			VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
			ChatResponse answer = FakeUpstream.chat(context);
			assertThat(answer.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
			time.advanceTimeBy(Duration.ofSeconds(5));
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
			HedgeReport report = context.getBean(Hedging.class).report().get("default");
			assertThat(report.callsInWindow()).isOne();
			assertThat(report.hedgesInWindow()).isZero();
		});
	}

	@Test
	void endpointTriedFirstThatAnswersAfterTheHedgeStartedWinsAndTheHedgeIsCancelled() {
		Gate primary = new Gate(completion("from primary"));
		Gate backup = new Gate(completion("from backup"));
		this.upstreams.primary().setDispatcher(primary);
		this.upstreams.backup().setDispatcher(backup);
		hedging().run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
				.expectSubscription()
				.then(() -> awaitRequests(this.upstreams.primary(), 1))
				.thenAwait(Duration.ofMillis(1500))
				.then(() -> awaitRequests(this.upstreams.backup(), 1))
				.then(primary::open)
				.assertNext((answer) -> {
					assertThat(answer.tier()).isEqualTo(Tier.PRIMARY);
					assertThat(answer.content()).isEqualTo("from primary");
					assertThat(answer.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
						.containsExactly(tuple("backup", Outcome.HEDGE_LOST), tuple("primary", Outcome.SUCCESS));
					assertThat(answer.attempts().get(0).duration()).isEqualTo(Duration.ofMillis(500));
				})
				.expectComplete()
				.verify(VERIFY);
			CircuitBreaker.Metrics lost = endpoint(context, "backup").circuitBreaker().getMetrics();
			assertThat(lost.getNumberOfSlowSuccessfulCalls()).isOne();
			assertThat(lost.getNumberOfFailedCalls()).isZero();
			assertThat(context.getBean(Hedging.class).report().get("default").firstWon()).isOne();
			backup.open();
		});
	}

	@Test
	void hedgedStreamRelaysOnlyTheWinnersChunks() {
		Gate held = new Gate(sse(stream("never ", "seen")));
		this.upstreams.primary().setDispatcher(held);
		this.upstreams.backup().enqueue(sse(stream("from ", "backup")));
		hedging().run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			List<ChatResponse> answered = new CopyOnWriteArrayList<>();
			StepVerifier.withVirtualTime(() -> gateway.stream(ChatRequest.ofUser("hello")))
				.expectSubscription()
				.then(() -> awaitRequests(this.upstreams.primary(), 1))
				.expectNoEvent(Duration.ofMillis(999))
				.thenAwait(Duration.ofMillis(1))
				.recordWith(CopyOnWriteArrayList::new)
				.thenConsumeWhile((chunk) -> true)
				.consumeRecordedWith((chunks) -> {
					assertThat(chunks).allSatisfy((chunk) -> {
						assertThat(chunk.endpoint()).isEqualTo("backup");
						assertThat(chunk.tier()).isEqualTo(Tier.FALLBACK);
					});
					assertThat(chunks.stream().map(ChatChunk::content).reduce("", String::concat)).isEqualTo("from backup");
				})
				.expectComplete()
				.verify(VERIFY);
			assertThat(endpoint(context, "primary").circuitBreaker().getMetrics().getNumberOfSlowSuccessfulCalls()).isOne();
			assertThat(endpoint(context, "primary").circuitBreaker().getMetrics().getNumberOfFailedCalls()).isZero();
			held.open();
		});
	}

	@Test
	void streamOfTheEndpointTriedFirstWinsAfterTheHedgeStartedAndTheHedgeIsCutBeforeAnyOfItsChunks() {
		Gate primary = new Gate(sse(stream("from ", "primary")));
		Gate backup = new Gate(sse(stream("never ", "seen")));
		this.upstreams.primary().setDispatcher(primary);
		this.upstreams.backup().setDispatcher(backup);
		hedging().run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			StepVerifier.withVirtualTime(() -> gateway.stream(ChatRequest.ofUser("hello")))
				.expectSubscription()
				.then(() -> awaitRequests(this.upstreams.primary(), 1))
				.thenAwait(Duration.ofSeconds(2))
				.then(() -> awaitRequests(this.upstreams.backup(), 1))
				.then(primary::open)
				.recordWith(CopyOnWriteArrayList::new)
				.thenConsumeWhile((chunk) -> true)
				.consumeRecordedWith((chunks) -> {
					assertThat(chunks).allSatisfy((chunk) -> assertThat(chunk.tier()).isEqualTo(Tier.PRIMARY));
					assertThat(chunks.stream().map(ChatChunk::content).reduce("", String::concat)).isEqualTo("from primary");
				})
				.expectComplete()
				.verify(VERIFY);
			CircuitBreaker.Metrics hedge = endpoint(context, "backup").circuitBreaker().getMetrics();
			assertThat(hedge.getNumberOfSlowSuccessfulCalls()).isOne();
			assertThat(hedge.getNumberOfFailedCalls()).isZero();
			backup.open();
		});
	}

	@Test
	void streamOfTheEndpointTriedFirstThatWinsAfterTheHedgeStartedIsPrimaryForItsListenersAsForItsChunks() {
		Gate primary = new Gate(sse(stream("from ", "primary")));
		Gate backup = new Gate(sse(stream("never ", "seen")));
		this.upstreams.primary().setDispatcher(primary);
		this.upstreams.backup().setDispatcher(backup);
		List<ChatResponse> answered = new CopyOnWriteArrayList<>();
		LlmGatewayListener listener = new LlmGatewayListener() {
			@Override
			public void onResponse(String route, ChatResponse response) {
				answered.add(response);
			}
		};
		hedging().withBean(LlmGatewayListener.class, () -> listener).run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			StepVerifier.withVirtualTime(() -> gateway.stream(ChatRequest.ofUser("hello")))
				.expectSubscription()
				.then(() -> awaitRequests(this.upstreams.primary(), 1))
				.thenAwait(Duration.ofSeconds(2))
				.then(() -> awaitRequests(this.upstreams.backup(), 1))
				.then(primary::open)
				.thenConsumeWhile((chunk) -> chunk.tier() == Tier.PRIMARY)
				.expectComplete()
				.verify(VERIFY);
			// the hedge's lost attempt is the first the call recorded: the tier is still the answer's endpoint's
			assertThat(answered).singleElement().satisfies((answer) -> {
				assertThat(answer.tier()).isEqualTo(Tier.PRIMARY);
				assertThat(answer.endpoint()).isEqualTo("primary");
				assertThat(answer.content()).isEqualTo("from primary");
				assertThat(answer.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
					.containsExactly(tuple("backup", Outcome.HEDGE_LOST), tuple("primary", Outcome.SUCCESS));
			});
			backup.open();
		});
	}

	@Test
	void budgetCapsTheShareOfCallsThatAreHedged() {
		Gate held = new Gate(completion("too late"));
		this.upstreams.primary().setDispatcher(held);
		this.upstreams.backup().setDispatcher(new mockwebserver3.Dispatcher() {
			@Override
			public mockwebserver3.MockResponse dispatch(mockwebserver3.RecordedRequest request) {
				return completion("from backup");
			}
		});
		hedging("llm.gateway.hedge.max-ratio=0.1", "llm.endpoints.primary.first-token-timeout=10s").run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			List<ChatResponse> answers = new CopyOnWriteArrayList<>();
			VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
			for (int i = 0; i < 10; i++) {
				gateway.chat(ChatRequest.ofUser("hello " + i)).subscribe(answers::add);
			}
			awaitRequests(this.upstreams.primary(), 10);
			time.advanceTimeBy(Duration.ofSeconds(1));
			// ten calls in the window: one hedge fits 10 % of them, the other nine are refused
			await().atMost(VERIFY).until(() -> answers.size() == 1);
			assertThat(answers.get(0).attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.HEDGE_LOST, Outcome.SUCCESS);
			assertThat(this.upstreams.backup().getRequestCount()).isOne();
			HedgeReport report = context.getBean(Hedging.class).report().get("default");
			assertThat(report.callsInWindow()).isEqualTo(10);
			assertThat(report.hedgesInWindow()).isOne();
			assertThat(report.refused()).isEqualTo(9);
			// the others wait out the first-token timeout, then fall back as without hedging
			time.advanceTimeBy(Duration.ofSeconds(9));
			await().atMost(VERIFY).until(() -> answers.size() == 10);
			assertThat(answers.subList(1, 10)).allSatisfy((answer) -> assertThat(answer.attempts())
				.extracting(Attempt::outcome)
				.containsExactly(Outcome.TIMEOUT, Outcome.SUCCESS));
			held.open();
		});
	}

	@Test
	void endpointThatKeepsLosingHedgesIsSeenAsSlowNeverAsFailing() {
		Gate held = new Gate(completion("too late"));
		this.upstreams.primary().setDispatcher(held);
		this.upstreams.backup().setDispatcher(new mockwebserver3.Dispatcher() {
			@Override
			public mockwebserver3.MockResponse dispatch(mockwebserver3.RecordedRequest request) {
				return completion("from backup");
			}
		});
		hedging("llm.endpoints.primary.circuit-breaker.sliding-window-size=2",
				"llm.endpoints.primary.circuit-breaker.minimum-number-of-calls=2").run((context) -> {
					LlmGateway gateway = context.getBean(LlmGateway.class);
					for (int i = 0; i < 2; i++) {
						StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
							.expectSubscription()
							.thenAwait(Duration.ofSeconds(1))
							.assertNext((answer) -> assertThat(answer.endpoint()).isEqualTo("backup"))
							.expectComplete()
							.verify(VERIFY);
					}
					CircuitBreaker primary = endpoint(context, "primary").circuitBreaker();
					assertThat(primary.getState()).isEqualTo(CircuitBreaker.State.OPEN);
					assertThat(primary.getMetrics().getSlowCallRate()).isEqualTo(100f);
					assertThat(primary.getMetrics().getNumberOfFailedCalls()).isZero();
					held.open();
				});
	}

	@Test
	void whenBothEndpointsFailTheWalkGoesOnAfterBoth() throws Exception {
		Gate held = new Gate(Answers.json(500, "{\"error\":{\"message\":\"down\"}}"));
		this.upstreams.primary().setDispatcher(held);
		this.upstreams.backup().enqueue(Answers.json(500, "{\"error\":{\"message\":\"down too\"}}"));
		try (MockWebServer third = new MockWebServer()) {
			third.enqueue(completion("from third"));
			third.start();
			hedging("llm.defaults.retry.max-attempts=1", "llm.endpoints.third.base-url=" + third.url("/v1"),
					"llm.endpoints.third.model=third-model", "llm.endpoints.third.priority=2",
					"llm.gateway.hedge.routes.default.enabled=true").run((context) -> {
						LlmGateway gateway = context.getBean(LlmGateway.class);
						StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
							.expectSubscription()
							.then(() -> awaitRequests(this.upstreams.primary(), 1))
							.thenAwait(Duration.ofSeconds(1))
							// the hedge failed at once: the endpoint tried first is still waited for
							.then(() -> awaitRequests(this.upstreams.backup(), 1))
							.then(() -> assertThat(third.getRequestCount()).isZero())
							.then(held::open)
							.assertNext((answer) -> {
								assertThat(answer.endpoint()).isEqualTo("third");
								assertThat(answer.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
									.containsExactly(tuple("backup", Outcome.SERVER_ERROR),
											tuple("primary", Outcome.SERVER_ERROR), tuple("third", Outcome.SUCCESS));
							})
							.expectComplete()
							.verify(VERIFY);
						assertThat(context.getBean(Hedging.class).report().get("default").noWinner()).isOne();
					});
		}
	}

	@Test
	void adaptiveDelayFollowsTheEndpointsFirstTokenTimes() {
		Gate held = new Gate(completion("too late"));
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner()
			.withPropertyValues("llm.gateway.hedge.enabled=true", "llm.gateway.hedge.delay=10s",
					"llm.gateway.hedge.min-delay=1s", "llm.gateway.hedge.max-ratio=1")
			.run((context) -> {
				// twenty quick answers: their 95th percentile is below the one-second floor
				for (int i = 0; i < 20; i++) {
					this.upstreams.primary().enqueue(completion("quick " + i));
					assertThat(FakeUpstream.chat(context).tier()).isEqualTo(Tier.PRIMARY);
				}
				assertThat(endpoint(context, "primary").firstTokenTimes().percentile(95)).isLessThan(Duration.ofSeconds(1));
				this.upstreams.primary().setDispatcher(held);
				LlmGateway gateway = context.getBean(LlmGateway.class);
				StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
					.expectSubscription()
					.then(() -> awaitRequests(this.upstreams.primary(), 21))
					.expectNoEvent(Duration.ofMillis(999))
					.thenAwait(Duration.ofMillis(1))
					.assertNext((answer) -> {
						assertThat(answer.endpoint()).isEqualTo("backup");
						assertThat(answer.latency()).as("hedged at the floor, not the fixed 10 s").isEqualTo(Duration.ofSeconds(1));
					})
					.expectComplete()
					.verify(VERIFY);
				held.open();
			});
	}

	@Test
	void routeWithoutItsOwnHedgingIsNotHedgedWhenTheDefaultIsOff() {
		Gate held = new Gate(completion("too late"));
		this.upstreams.primary().setDispatcher(held);
		this.upstreams.runner()
			.withPropertyValues("llm.routes.other=primary,backup", "llm.gateway.hedge.routes.other.enabled=true",
					"llm.gateway.hedge.routes.other.adaptive=false", "llm.gateway.hedge.routes.other.delay=1s",
					"llm.gateway.hedge.routes.other.max-ratio=1", "llm.defaults.first-token-timeout=5s")
			.run((context) -> {
				assertThat(context.getBean(Hedging.class).report()).containsOnlyKeys("other");
				LlmGateway gateway = context.getBean(LlmGateway.class);
				this.upstreams.backup().enqueue(completion("after the timeout"));
				StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
					.expectSubscription()
					.then(() -> awaitRequests(this.upstreams.primary(), 1))
					.expectNoEvent(Duration.ofMillis(4999))
					.then(() -> assertThat(this.upstreams.backup().getRequestCount()).as("not hedged").isZero())
					.thenAwait(Duration.ofMillis(1))
					.assertNext((answer) -> assertThat(answer.attempts()).extracting(Attempt::outcome)
						.containsExactly(Outcome.TIMEOUT, Outcome.SUCCESS))
					.expectComplete()
					.verify(VERIFY);
				held.open();
			});
	}

	private static org.assertj.core.groups.Tuple tuple(Object... values) {
		return org.assertj.core.groups.Tuple.tuple(values);
	}

	private static void awaitRequests(MockWebServer server, int count) {
		await().atMost(Duration.ofSeconds(10)).until(() -> server.getRequestCount() >= count);
	}

}
