package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.PacedCalls;
import dev.llmresilience.support.RealTime;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.test.scheduler.VirtualTimeScheduler;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One replica's evidence of a hang opens the endpoint on every replica (docs/shared-state.md): two
 * replicas on one real Redis call the same hung provider (each through a server of its own, so that
 * each one's calls are told apart), replica a with 5 calls a second, enough to be evidence, replica
 * b with one, too few for its own rule before 5 s. Over real local HTTP, in virtual time (one clock
 * for both): each primary holds a request until the clock reaches the time the test gave it, and
 * the clock moves on only once every answer due has arrived and, once a opened, once b did too or
 * 10 s of real time passed.
 */
@ExtendWith(OutputCaptureExtension.class)
class FleetHangEvidenceTests {

	private static final long TICK = 50;

	// first tokens in 0.1-0.8 s, in turn: a p99 of 0.85 s, a threshold of 2.56 s
	private static final long[] HEALTHY = { 100, 250, 400, 550, 700, 800 };

	// 24 s of healthy traffic gives b 24 first tokens, more than the 20 its own rule needs
	private static final long HANG = 24_000;

	@RegisterExtension
	final RedisFleet redis = new RedisFleet();

	private final List<FakeUpstream> upstreams = new ArrayList<>();

	private final List<PacedCalls.Primary> primaries = List.of(
			new PacedCalls.Primary().probesAnsweredAfter(Duration.ofSeconds(1)),
			new PacedCalls.Primary().probesAnsweredAfter(Duration.ofSeconds(1)));

	@BeforeEach
	void start() {
		for (PacedCalls.Primary primary : this.primaries) {
			FakeUpstream upstream = FakeUpstream.start();
			upstream.primary().setDispatcher(primary);
			upstream.backup().setDispatcher(new Dispatcher() {
				@Override
				public MockResponse dispatch(RecordedRequest request) {
					return completion("from backup");
				}
			});
			this.upstreams.add(upstream);
		}
	}

	@AfterEach
	void stop() {
		this.primaries.forEach(PacedCalls.Primary::close);
		VirtualTimeScheduler.reset();
		this.upstreams.forEach(FakeUpstream::close);
	}

	private List<ApplicationContextRunner> replicas(String... more) {
		return List.of(this.redis.replica("a", this.upstreams.get(0).properties(more)),
				this.redis.replica("b", this.upstreams.get(1).properties(more)));
	}

	@Test
	void oneReplicasEvidenceOpensEveryReplicaAtOnceAndOneReplicaProbesForTheFleet(CapturedOutput output) {
		Replicas.run(replicas("llm.defaults.circuit-breaker.wait-duration-in-open-state=2s"), (replicas) -> {
			Traffic traffic = new Traffic(replicas);
			traffic.run(HANG + 6000, true);
			long openedA = traffic.openedAt[0];
			long openedB = traffic.openedAt[1];
			assertThat(openedA - HANG).as("ms from the hang to a's opening").isBetween(2000L, 3000L);
			// the clock stood still from the tick a opened in until b opened
			assertThat(openedB).as("b opened in the tick of a's opening, in virtual time").isBetween(openedA, openedA + TICK);
			assertThat(traffic.openedAtNanos[1] - traffic.openedAtNanos[0]).as("real ns from a's opening to b's")
				.isBetween(0L, TimeUnit.SECONDS.toNanos(2));
			// b's own evidence was too little: its calls into the hang went to the backup when the fleet opened it
			List<ChatResponse> heldByB = traffic.hungCalls(1);
			assertThat(heldByB).hasSizeBetween(1, 4).allSatisfy((answer) -> {
				assertThat(answer.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(answer.content()).isEqualTo("from backup");
				assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.RELEASED, Outcome.SUCCESS);
			});
			LlmEndpoint b = endpoint(replicas.get(1), "primary");
			assertThat(b.circuitBreaker().getMetrics().getNumberOfFailedCalls()).isZero();
			assertThat(b.hang().describe().openings()).as("b's own evidence opened nothing").isZero();
			assertThat(opened(output)).hasSize(2)
				.anySatisfy((line) -> assertThat(line).matches(".*CLOSED -> OPEN: no first token from \\d+ calls for 2\\.\\d s; "
						+ "first tokens took 0\\.9 s at p99 \\(liveness.hang-detection\\); calls go to .*"))
				.anySatisfy((line) -> assertThat(line).matches(".*CLOSED -> OPEN: opened by replica a: no first token from \\d+ "
						+ "calls for 2\\.\\d s; first tokens took 0\\.9 s at p99 \\(liveness.hang-detection\\); "
						+ "replica a probes it for the fleet; calls go to the next endpoint of their route"));
			assertThat(this.redis.commands().hgetall(RedisKeys.PREFIX + "breaker:primary:state"))
				.containsEntry("state", "OPEN").containsEntry("by", "a")
				.hasEntrySatisfying("why", (why) -> assertThat(why).startsWith("no first token from "));

			// the provider answers again: a's probes (the library's, after 2 s of real time, answered a second
			// later, so that b's own half-open comes meanwhile) close both; b sends none
			await().atMost(Duration.ofSeconds(30)).until(() -> state(replicas.get(0)) == State.CLOSED
					&& state(replicas.get(1)) == State.CLOSED);
			assertThat(this.primaries.get(0).probes()).as("a's probes").isEqualTo(3);
			assertThat(this.primaries.get(1).probes()).as("b's probes").isZero();
			assertThat(output.getAll()).contains("circuit breaker OPEN -> CLOSED: the probes of replica a succeeded");
		});
	}

	@Test
	void withRedisUnavailableTheReplicaThatSeesTheHangOpensAloneAndTheOtherKeepsItsOwnRule(CapturedOutput output) {
		Replicas.run(replicas(), (replicas) -> {
			this.redis.server().stop();
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(30))
					.until(() -> !replica.getBean(LlmBreakersEndpoint.class).breakers().sharedState().available());
			}
			Traffic traffic = new Traffic(replicas);
			traffic.run(HANG + 7000, false);
			long openedA = traffic.openedAt[0];
			long openedB = traffic.openedAt[1];
			assertThat(openedA - HANG).as("ms from the hang to a's opening").isBetween(2000L, 3000L);
			// b opened on its own evidence once 5 of its calls waited: seconds after a, before its first-token timeout
			assertThat(openedB - HANG).as("ms from the hang to b's own opening").isBetween(4000L, 7000L);
			assertThat(endpoint(replicas.get(1), "primary").hang().describe().openings()).isOne();
			assertThat(opened(output)).hasSize(2)
				.allSatisfy((line) -> assertThat(line).matches(".*CLOSED -> OPEN: no first token from \\d+ calls for .*")
					.doesNotContain("opened by replica"));
		});
	}

	private static List<String> opened(CapturedOutput output) {
		return output.getAll().lines().filter((line) -> line.contains("circuit breaker CLOSED -> OPEN")).toList();
	}

	private static State state(ApplicationContext replica) {
		return endpoint(replica, "primary").circuitBreaker().getState();
	}

	/**
	 * The test's traffic in virtual time: replica a gets a call every 200 ms, b one every second,
	 * each primary answering a call at the time the test gave it (0.1-0.8 s after it was sent, or
	 * never when that would come after the hang began).
	 */
	private final class Traffic {

		private static final long[] EVERY = { 200, 1000 };

		final VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();

		private final List<LlmGateway> gateways = new ArrayList<>();

		private final Map<Integer, Integer> replicaOf = new ConcurrentHashMap<>();

		private final PacedCalls calls = new PacedCalls(
				(id) -> FleetHangEvidenceTests.this.primaries.get(this.replicaOf.get(id)));

		final long[] openedAt = { -1, -1 };

		final long[] openedAtNanos = new long[2];

		private final int[] sent = new int[2];

		Traffic(List<? extends ApplicationContext> replicas) {
			for (int i = 0; i < replicas.size(); i++) {
				int replica = i;
				this.gateways.add(replicas.get(i).getBean(LlmGateway.class));
				LlmEndpoint endpoint = endpoint(replicas.get(i), "primary");
				endpoint.circuitBreaker().getEventPublisher().onStateTransition((event) -> {
					if (event.getStateTransition().getToState() == State.OPEN && this.openedAt[replica] < 0) {
						this.openedAtNanos[replica] = System.nanoTime();
						this.openedAt[replica] = now();
					}
				});
			}
		}

		/**
		 * Run until {@code until}, or, when {@code untilBothOpen}, until both replicas opened (waiting
		 * in real time for b once a opened).
		 */
		void run(long until, boolean untilBothOpen) {
			while (now() < until) {
				for (int replica = 0; replica < 2; replica++) {
					if (now() % EVERY[replica] == 0) {
						send(replica);
					}
				}
				this.calls.settle(now());
				if (this.openedAt[0] >= 0 && untilBothOpen) {
					RealTime.within(() -> this.openedAt[1] >= 0);
					return;
				}
				this.time.advanceTimeBy(Duration.ofMillis(TICK));
			}
			this.calls.settle(now());
		}

		private void send(int replica) {
			long latency = HEALTHY[this.sent[replica]++ % HEALTHY.length];
			// its primary is looked up only when the calls settle, after this
			int id = this.calls.send(this.gateways.get(replica), now(), (now() + latency < HANG) ? latency : PacedCalls.NEVER);
			this.replicaOf.put(id, replica);
		}

		// the calls of a replica that its primary was never to answer
		List<ChatResponse> hungCalls(int replica) {
			return this.replicaOf.entrySet()
				.stream()
				.filter((entry) -> entry.getValue() == replica && !this.calls.isDue(entry.getKey()))
				.map((entry) -> this.calls.answer(entry.getKey()))
				.toList();
		}

		private long now() {
			return this.time.now(TimeUnit.MILLISECONDS);
		}

	}

}
