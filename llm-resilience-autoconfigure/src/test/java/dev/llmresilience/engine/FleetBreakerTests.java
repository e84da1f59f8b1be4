package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.support.Answers;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.FakeUpstream.chat;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Breakers shared by replicas on one real Redis: a provider outage opens every
 * replica after the fleet's first 20 failures (not 20 each), late joiners included; one replica's
 * own failures do not take the provider from the others; states set by hand apply fleet-wide.
 */
@ExtendWith(OutputCaptureExtension.class)
class FleetBreakerTests {

	@RegisterExtension
	final RedisFleet redis = new RedisFleet();

	private final MockWebServer failing = new MockWebServer();

	private final MockWebServer healthy = new MockWebServer();

	@BeforeEach
	void start() throws Exception {
		this.failing.setDispatcher(always(Answers.error(503, "overloaded")));
		this.healthy.setDispatcher(always(Answers.completion("fine")));
		this.failing.start();
		this.healthy.start();
	}

	@AfterEach
	void stop() {
		this.failing.close();
		this.healthy.close();
	}

	private String[] provider(MockWebServer server, String... more) {
		List<String> properties = new ArrayList<>(List.of("llm.endpoints.primary.base-url=" + server.url("/v1"),
				"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1"));
		properties.addAll(List.of(more));
		return properties.toArray(String[]::new);
	}

	@Test
	void providerOutageOpensEveryReplicaAfterTwentyFailuresInAll() {
		Replicas.run(List.of(this.redis.replica("a", provider(this.failing)),
				this.redis.replica("b", provider(this.failing)),
				this.redis.replica("c", provider(this.failing))), (replicas) -> {
					for (int i = 0; i < 60 && !allOpen(replicas); i++) {
						assertThat(chat(replicas.get(i % 3)).tier()).isEqualTo(Tier.BUSY);
					}
					await().atMost(Duration.ofSeconds(30)).until(() -> allOpen(replicas));
					// the fleet's 20th failure opened it; the calls that reached another replica while the news was on
					// its way (a message on the channel, under a millisecond on an idle machine) add a few at most
					assertThat(this.failing.getRequestCount()).isBetween(20, 25);
					for (ApplicationContext replica : replicas) {
						assertThat(endpoint(replica, "primary").circuitBreaker().getMetrics().getNumberOfFailedCalls())
							.as("failures in a replica's own window: far from its own 20").isLessThan(20);
					}
					int before = this.failing.getRequestCount();
					replicas.forEach((replica) -> assertThat(chat(replica).tier()).isEqualTo(Tier.BUSY));
					assertThat(this.failing.getRequestCount()).isEqualTo(before);
					// a replica that starts now learns it from the fleet's state
					this.redis.replica("late", provider(this.failing)).run((late) -> {
						assertThat(endpoint(late, "primary").circuitBreaker().getState()).isEqualTo(CircuitBreaker.State.OPEN);
						assertThat(chat(late).tier()).isEqualTo(Tier.BUSY);
						assertThat(this.failing.getRequestCount()).isEqualTo(before);
					});
				});
	}

	@Test
	void oneReplicaProbesForTheFleetAndEveryReplicaClosesWhenItsProbesSucceed(CapturedOutput output) throws Exception {
		// each replica reaches the provider through a server of its own, so that each one's calls can be told apart
		List<SwitchableProvider> views = List.of(new SwitchableProvider(), new SwitchableProvider(), new SwitchableProvider());
		List<org.springframework.boot.test.context.runner.ApplicationContextRunner> runners = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			runners.add(this.redis.replica("r" + i, "llm.endpoints.primary.base-url=" + views.get(i).baseUrl(),
					"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1",
					"llm.defaults.circuit-breaker.wait-duration-in-open-state=2s"));
		}
		Replicas.run(runners, (replicas) -> {
			List<List<CircuitBreaker.State>> seen = new ArrayList<>();
			for (ApplicationContext replica : replicas) {
				List<CircuitBreaker.State> states = new java.util.concurrent.CopyOnWriteArrayList<>();
				endpoint(replica, "primary").circuitBreaker().getEventPublisher()
					.onStateTransition((event) -> states.add(event.getStateTransition().getToState()));
				seen.add(states);
			}
			for (int i = 0; i < 60 && !allOpen(replicas); i++) {
				chat(replicas.get(i % 3));
			}
			await().atMost(Duration.ofSeconds(30)).until(() -> allOpen(replicas));
			int[] atOpen = views.stream().mapToInt(SwitchableProvider::requests).toArray();
			// two rounds of failed probes (3 each), the fleet's traffic going on meanwhile; the wait of 2 s leaves
			// a busy machine time to tell every replica that the fleet opened before its own half-open could come
			long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
			for (int i = 0; System.nanoTime() < deadline && sinceOpen(views, atOpen).stream().mapToInt(Integer::intValue).sum() < 6; i++) {
				chat(replicas.get(i % 3));
			}
			List<Integer> calls = sinceOpen(views, atOpen);
			int leader = calls.indexOf(calls.stream().mapToInt(Integer::intValue).max().getAsInt());
			for (int i = 0; i < 3; i++) {
				if (i != leader) {
					assertThat(calls.get(i)).as("probes of follower r" + i + " since the fleet opened").isZero();
				}
			}
			assertThat(calls.get(leader)).as("the leader's probes").isBetween(6, 9);
			assertThat(seen.get(leader)).as("the leader's half-open phases").contains(CircuitBreaker.State.HALF_OPEN);
			for (int i = 0; i < 3; i++) {
				if (i != leader) {
					assertFollowed(replicas.get(i).getBean(BreakerTransitions.class).recent("primary"), "r" + leader);
				}
			}
			// and logged in that order: no follower's move back to OPEN before the half-open it ends
			int halfOpen = 0;
			for (String line : output.toString().lines().toList()) {
				if (line.contains("OPEN -> HALF_OPEN: replica r" + leader + " probes it for the fleet; this replica sends no probe")) {
					halfOpen++;
				}
				else if (line.contains("HALF_OPEN -> OPEN: replica r" + leader + " probes it for the fleet")) {
					assertThat(--halfOpen).as("half-open phases logged before this move back to OPEN: %s", line).isNotNegative();
				}
			}

			views.forEach(SwitchableProvider::heal);
			deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
			for (int i = 0; System.nanoTime() < deadline && !allClosed(replicas); i++) {
				chat(replicas.get(leader));
			}
			await().atMost(Duration.ofSeconds(30)).until(() -> allClosed(replicas));
			for (int i = 0; i < 3; i++) {
				if (i != leader) {
					assertThat(views.get(i).requests()).as("follower r" + i + " closed without probing").isEqualTo(atOpen[i]);
				}
				assertThat(chat(replicas.get(i)).tier()).isEqualTo(Tier.PRIMARY);
			}
		});
		views.forEach(SwitchableProvider::close);
	}

	/**
	 * A follower's transitions since the fleet opened: its half-open phases each said to be the
	 * leader's, and each followed, not preceded, by its move back to OPEN; every move the fleet's.
	 */
	private static void assertFollowed(List<BreakerTransitions.Transition> transitions, String leader) {
		List<String> moves = transitions.stream().map((t) -> t.from() + " -> " + t.to()).toList();
		int opened = moves.lastIndexOf("CLOSED -> OPEN");
		assertThat(opened).as("the fleet's open in %s", moves).isNotNegative();
		List<BreakerTransitions.Transition> since = transitions.subList(opened, transitions.size());
		assertThat(since).allSatisfy((t) -> assertThat(t.source()).isEqualTo(BreakerTransitions.Transition.FLEET));
		assertThat(since.get(0).reason()).startsWith("opened by replica " + leader);
		for (int i = 1; i < since.size(); i++) {
			BreakerTransitions.Transition t = since.get(i);
			if (t.to() == CircuitBreaker.State.HALF_OPEN) {
				assertThat(t.reason()).isEqualTo("replica " + leader
						+ " probes it for the fleet; this replica sends no probe and goes back to OPEN");
				assertThat(since.get(i - 1).to()).as("%s", moves).isEqualTo(CircuitBreaker.State.OPEN);
			}
			else {
				assertThat(t.from()).as("%s", moves).isEqualTo(CircuitBreaker.State.HALF_OPEN);
				assertThat(t.to()).isEqualTo(CircuitBreaker.State.OPEN);
				// the follower's own move back, or the fleet's open heard again at a heartbeat meanwhile
				// ("opened by replica ...: ...; replica ... probes it for the fleet"), whichever came first
				assertThat(t.reason()).contains("replica " + leader + " probes it for the fleet");
				assertThat(since.get(i - 1).to()).as("%s", moves).isEqualTo(CircuitBreaker.State.HALF_OPEN);
			}
		}
		assertThat(since).as("%s: half-open phases followed", moves).hasSizeGreaterThan(1);
	}

	private static List<Integer> sinceOpen(List<SwitchableProvider> views, int[] atOpen) {
		List<Integer> calls = new ArrayList<>();
		for (int i = 0; i < views.size(); i++) {
			calls.add(views.get(i).requests() - atOpen[i]);
		}
		return calls;
	}

	private static boolean allClosed(List<? extends ApplicationContext> replicas) {
		return replicas.stream()
			.allMatch((replica) -> endpoint(replica, "primary").circuitBreaker().getState() == CircuitBreaker.State.CLOSED);
	}

	@Test
	void oneReplicasOwnFailuresDoNotTakeTheProviderFromTheOthers() {
		// replica a cannot reach the provider (its own network fault); b and c can. Each call of a is
		// retried (3 attempts), so a sends three failures for each success of the others: more than
		// half of the fleet's window fails, yet the failures are a's alone.
		Replicas.run(List.of(this.redis.replica("a", provider(this.failing, "llm.defaults.retry.max-attempts=3")),
				this.redis.replica("b", provider(this.healthy, "llm.defaults.retry.max-attempts=3")),
				this.redis.replica("c", provider(this.healthy, "llm.defaults.retry.max-attempts=3"))),
				(replicas) -> {
					for (int i = 0; i < 45; i++) {
						ChatResponse answer = chat(replicas.get(i % 3));
						assertThat(answer.tier()).isEqualTo((i % 3 == 0) ? Tier.BUSY : Tier.PRIMARY);
					}
					// a's own breaker opened on its own window; the others' stay closed and keep the provider
					assertThat(state(replicas.get(0))).isEqualTo(CircuitBreaker.State.OPEN);
					assertThat(state(replicas.get(1))).isEqualTo(CircuitBreaker.State.CLOSED);
					assertThat(state(replicas.get(2))).isEqualTo(CircuitBreaker.State.CLOSED);
					// a's own 20 failures (its 7th call's third attempt is refused by its own open breaker)
					assertThat(this.failing.getRequestCount()).isEqualTo(20);
					assertThat(this.healthy.getRequestCount()).isEqualTo(30);
					// and a replica that starts now is not told to open it either
					this.redis.replica("late", provider(this.healthy)).run((late) -> {
						assertThat(state(late)).isEqualTo(CircuitBreaker.State.CLOSED);
						assertThat(chat(late).tier()).isEqualTo(Tier.PRIMARY);
					});
				});
	}

	@Test
	void twoReplicasFailingAloneDoNotOpenTheProviderOnTheOneItAnswers() throws Exception {
		MockWebServer alsoFailing = new MockWebServer();
		alsoFailing.setDispatcher(always(Answers.error(503, "overloaded")));
		alsoFailing.start();
		Replicas.run(List.of(this.redis.replica("a", provider(this.failing)),
				this.redis.replica("b", provider(alsoFailing)),
				this.redis.replica("c", provider(this.healthy))), (replicas) -> {
					for (int i = 0; i < 30; i++) {
						chat(replicas.get(i % 3));
					}
					// the fleet's window is two thirds failures from two replicas, but c is answered: c keeps it
					assertThat(state(replicas.get(2))).isEqualTo(CircuitBreaker.State.CLOSED);
					assertThat(chat(replicas.get(2)).tier()).isEqualTo(Tier.PRIMARY);
					assertThat(state(replicas.get(0))).isEqualTo(CircuitBreaker.State.CLOSED);
					assertThat(state(replicas.get(1))).isEqualTo(CircuitBreaker.State.CLOSED);
				});
		alsoFailing.close();
	}

	@Test
	void statesSetByHandApplyOnEveryReplicaAndOnReplicasThatJoinLater() {
		Replicas.run(List.of(this.redis.replica("a", provider(this.healthy)),
				this.redis.replica("b", provider(this.healthy))), (replicas) -> {
					ApplicationContext a = replicas.get(0);
					ApplicationContext b = replicas.get(1);
					assertThat(a.getBean(LlmBreakersEndpoint.class).transition("primary", "forced_open").breaker().state())
						.isEqualTo("FORCED_OPEN");
					await().atMost(Duration.ofSeconds(30)).until(() -> state(b) == CircuitBreaker.State.FORCED_OPEN);
					BreakerTransitions.Transition own = a.getBean(BreakerTransitions.class).last("primary");
					assertThat(own.reason()).startsWith("set by hand (the actuator's POST");
					assertThat(own.source()).isNull();
					BreakerTransitions.Transition fromTheFleet = b.getBean(BreakerTransitions.class).last("primary");
					assertThat(fromTheFleet.reason()).isEqualTo("set to FORCED_OPEN by hand on replica a, for the fleet");
					assertThat(fromTheFleet.source()).isEqualTo(BreakerTransitions.Transition.FLEET);
					assertThat(chat(b).tier()).isEqualTo(Tier.BUSY);
					assertThat(this.healthy.getRequestCount()).isZero();
					this.redis.replica("late", provider(this.healthy)).run((late) -> {
						assertThat(state(late)).isEqualTo(CircuitBreaker.State.FORCED_OPEN);

						b.getBean(LlmBreakersEndpoint.class).transition("primary", "CLOSED");
						await().atMost(Duration.ofSeconds(30))
							.until(() -> state(a) == CircuitBreaker.State.CLOSED && state(late) == CircuitBreaker.State.CLOSED);
						assertThat(a.getBean(BreakerTransitions.class).last("primary").reason())
							.isEqualTo("set to CLOSED by hand on replica b, for the fleet");
						assertThat(chat(a).tier()).isEqualTo(Tier.PRIMARY);

						late.getBean(LlmBreakersEndpoint.class).transition("primary", "DISABLED");
						await().atMost(Duration.ofSeconds(30))
							.until(() -> state(a) == CircuitBreaker.State.DISABLED && state(b) == CircuitBreaker.State.DISABLED);
						a.getBean(LlmBreakersEndpoint.class).transition("primary", "RESET");
						await().atMost(Duration.ofSeconds(30))
							.until(() -> state(b) == CircuitBreaker.State.CLOSED && state(late) == CircuitBreaker.State.CLOSED);
					});
					// the mark a hand-made CLOSED leaves does not close anything on a replica that joins after it
					this.redis.replica("later", provider(this.healthy))
						.run((later) -> assertThat(state(later)).isEqualTo(CircuitBreaker.State.CLOSED));
				});
	}

	private static CircuitBreaker.State state(ApplicationContext replica) {
		return endpoint(replica, "primary").circuitBreaker().getState();
	}

	private static boolean allOpen(List<? extends ApplicationContext> replicas) {
		return replicas.stream()
			.allMatch((replica) -> endpoint(replica, "primary").circuitBreaker().getState() == CircuitBreaker.State.OPEN);
	}

	private static Dispatcher always(MockResponse response) {
		return new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return response;
			}
		};
	}

}
