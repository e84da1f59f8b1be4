package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.LongUnaryOperator;
import java.util.stream.IntStream;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.PacedCalls;
import dev.llmresilience.support.RealTime;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.answering;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hang known from the endpoint's own evidence (docs/liveness.md): under steady traffic, an
 * endpoint whose first tokens came in under a second and then stop coming opens its breaker within
 * 3 s, with {@code first-token-timeout} still 10 s, and the calls it held are answered by the next
 * endpoint; a lone slow request among answered ones, a provider slowed tenfold for every call and
 * too little traffic leave it to the fixed timeout. Over real local HTTP, in virtual time: the
 * primary holds each request until the virtual clock reaches the time the test gave it, and the
 * clock moves on only once every answer due has arrived, so first-token times are exact.
 */
class HangEvidenceTests {

	private static final long TICK = 50;

	// first tokens in 0.1-0.8 s, in turn: a p99 of 0.85 s (its histogram bucket), a threshold of 2.56 s
	private static final long[] HEALTHY = { 100, 250, 400, 550, 700, 800 };

	private FakeUpstream upstreams;

	private final PacedCalls.Primary primary = new PacedCalls.Primary();

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
		this.upstreams.primary().setDispatcher(this.primary);
		this.upstreams.backup().setDispatcher(answering("from backup"));
	}

	@AfterEach
	void stop() {
		this.primary.close();
		VirtualTimeScheduler.reset();
		this.upstreams.close();
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.runner()
			.withConfiguration(AutoConfigurations.of(LlmBreakersEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=llmbreakers");
	}

	@Test
	void hangUnderSteadyTrafficOpensTheBreakerWithinThreeSecondsAndTheBackupAnswersTheHeldCalls() {
		runner().run((context) -> {
			Traffic traffic = new Traffic(context);
			CircuitBreaker breaker = endpoint(context, "primary").circuitBreaker();
			long hang = 8000;
			// 5 calls a second; from 8 s on, no first token for anyone
			traffic.run(200, 8000 + 4000, (sent) -> healthy(sent, hang));
			assertThat(traffic.openedAt).as("the breaker opened").isPositive();
			assertThat(traffic.openedAt - hang).as("ms from the hang to the opening").isBetween(2000L, 3000L);
			assertThat(traffic.evidenceSeen).as("the evidence shown while it built up").isNotNull();
			assertThat(traffic.evidenceSeen.waitingCalls()).isGreaterThanOrEqualTo(5);
			assertThat(traffic.evidenceSeen.threshold()).isEqualTo(Duration.ofNanos(2_555_904_000L));
			assertThat(traffic.evidenceSeen.lastFirstTokenAt()).isNotNull();
			List<ChatResponse> held = traffic.heldAtOpening();
			assertThat(held).hasSizeGreaterThanOrEqualTo(10).allSatisfy((answer) -> {
				assertThat(answer.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(answer.content()).isEqualTo("from backup");
				assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.RELEASED,
						Outcome.SUCCESS);
				assertThat(answer.latency()).isLessThan(Duration.ofMillis(3500));
			});
			assertThat(traffic.unanswered()).as("calls never answered").isEmpty();
			assertThat(breaker.getMetrics().getNumberOfFailedCalls()).as("opened on evidence, not failures").isZero();
			HangDescriptor shown = context.getBean(LlmBreakersEndpoint.class).breaker("primary").hang();
			assertThat(shown.openings()).isOne();
			assertThat(shown.lastOpening()).matches("no first token from \\d+ calls for 2\\.\\d s; "
					+ "first tokens took 0\\.9 s at p99 \\(liveness.hang-detection\\)");
			assertThat(context.getBean(BreakerTransitions.class).recent("primary"))
				.extracting(BreakerTransitions.Transition::to)
				.containsExactly(State.OPEN);
		});
	}

	@Test
	void loneSlowRequestAmongAnsweredOnesIsAnsweredAndCountsAsNoFailure() {
		runner().run((context) -> {
			Traffic traffic = new Traffic(context);
			int slow = 60;
			// 20 calls a second, answered in 0.1-0.8 s, but one whose first token takes 6 s
			traffic.run(50, 10_000, (sent) -> (sent == slow) ? 6000 : HEALTHY[(int) (sent % HEALTHY.length)]);
			ChatResponse answer = traffic.answer(slow);
			assertThat(answer.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.SUCCESS);
			assertThat(answer.latency()).isEqualTo(Duration.ofSeconds(6));
			assertThat(traffic.openedAt).as("never opened").isEqualTo(-1);
			CircuitBreaker breaker = endpoint(context, "primary").circuitBreaker();
			assertThat(breaker.getState()).isEqualTo(State.CLOSED);
			assertThat(breaker.getMetrics().getNumberOfFailedCalls()).isZero();
			assertThat(traffic.answers()).allSatisfy((each) -> assertThat(each.tier()).isEqualTo(Tier.PRIMARY));
		});
	}

	@Test
	void providerSlowedTenfoldForEveryCallIsLeftToTheSlowCallRule() {
		runner().run((context) -> {
			Traffic traffic = new Traffic(context);
			long slowFrom = 8000;
			// 5 calls a second; from 8 s on every first token takes ten times as long (1-8 s), and keeps coming
			traffic.run(200, 24_000, (sent) -> {
				long latency = HEALTHY[(int) (sent % HEALTHY.length)];
				return (sent * 200 >= slowFrom) ? latency * 10 : latency;
			});
			assertThat(traffic.openedAt).as("never opened").isEqualTo(-1);
			assertThat(endpoint(context, "primary").circuitBreaker().getState()).isEqualTo(State.CLOSED);
			assertThat(traffic.answers()).hasSizeGreaterThan(90)
				.allSatisfy((each) -> assertThat(each.tier()).isEqualTo(Tier.PRIMARY));
			assertThat(context.getBean(LlmBreakersEndpoint.class).breaker("primary").hang().openings()).isZero();
		});
	}

	@Test
	void tooLittleTrafficLeavesTheFixedFirstTokenTimeout() {
		runner().run((context) -> {
			Traffic traffic = new Traffic(context);
			long hang = 8000;
			// 5 calls a second for 8 s, then one every 3 s into a hang: never 5 waiting at once
			traffic.run(200, hang, (sent) -> HEALTHY[(int) (sent % HEALTHY.length)]);
			int first = traffic.sent();
			traffic.run(3000, hang + 14_000, (sent) -> PacedCalls.NEVER);
			// its fallback's answer comes over real HTTP, in real time, after its first-token timeout
			ChatResponse answer = traffic.answer(first);
			assertThat(answer.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.TIMEOUT, Outcome.SUCCESS);
			assertThat(answer.attempts().get(0).duration()).isEqualTo(Duration.ofSeconds(10));
			assertThat(context.getBean(LlmBreakersEndpoint.class).breaker("primary").hang().openings()).isZero();
			assertThat(traffic.openedAt).as("never opened").isEqualTo(-1);
		});
	}

	@Test
	void switchedOffTheRuleLeavesTheFixedFirstTokenTimeoutUnderTraffic() {
		runner().withPropertyValues("llm.endpoints.primary.liveness.hang-detection.enabled=false").run((context) -> {
			Traffic traffic = new Traffic(context);
			long hang = 8000;
			traffic.run(200, hang + 4000, (sent) -> healthy(sent, hang));
			assertThat(traffic.openedAt).as("never opened").isEqualTo(-1);
			HangDescriptor shown = context.getBean(LlmBreakersEndpoint.class).breaker("primary").hang();
			assertThat(shown.enabled()).isFalse();
			assertThat(shown.threshold()).isNull();
			assertThat(shown.waitingCalls()).isGreaterThanOrEqualTo(15);
		});
	}

	@Test
	void probeIntoAHangWaitsForItsFirstTokenAsLongAsFirstTokensTookNotTheWholeTimeout() {
		runner().withPropertyValues("llm.defaults.circuit-breaker.wait-duration-in-open-state=300ms").run((context) -> {
			Traffic traffic = new Traffic(context);
			traffic.run(200, 5000, (sent) -> HEALTHY[(int) (sent % HEALTHY.length)]);
			LlmEndpoint primary = endpoint(context, "primary");
			// 3 x the p99 of 0.85 s is under the probe floor: the floor bounds the probes
			assertThat(primary.hang().describe().probeTimeout()).isEqualTo(Duration.ofSeconds(3));
			this.primary.holdProbes();
			CircuitBreaker breaker = primary.circuitBreaker();
			breaker.transitionToOpenState();
			// Resilience4j's own timer moves it to half-open after 300 ms of real time; the probes leave then
			RealTime.until(() -> this.primary.probes() == 3);
			traffic.time.advanceTimeBy(Duration.ofMillis(2999));
			assertThat(breaker.getState()).isEqualTo(State.HALF_OPEN);
			assertThat(primary.probes().failed()).isZero();
			traffic.time.advanceTimeBy(Duration.ofMillis(1));
			RealTime.until(() -> primary.probes().failed() == 3);
			assertThat(primary.probes().lastOutcome()).isEqualTo(Outcome.TIMEOUT);
			assertThat(breaker.getState()).isEqualTo(State.OPEN);
		});
	}

	@Test
	void probeOfAnEndpointWithTooFewFirstTokensKnownWaitsTheFirstTokenTimeout() {
		runner().withPropertyValues("llm.defaults.circuit-breaker.wait-duration-in-open-state=300ms").run((context) -> {
			Traffic traffic = new Traffic(context);
			LlmEndpoint primary = endpoint(context, "primary");
			assertThat(primary.hang().describe().probeTimeout()).isEqualTo(Duration.ofSeconds(10));
			this.primary.holdProbes();
			primary.circuitBreaker().transitionToOpenState();
			RealTime.until(() -> this.primary.probes() == 3);
			traffic.time.advanceTimeBy(Duration.ofMillis(9999));
			assertThat(primary.probes().failed()).isZero();
			traffic.time.advanceTimeBy(Duration.ofMillis(1));
			RealTime.until(() -> primary.probes().failed() == 3);
		});
	}

	// Answered in 0.1-0.8 s, unless the answer would come after the hang began.
	private static long healthy(long sent, long hang) {
		long latency = HEALTHY[(int) (sent % HEALTHY.length)];
		return (sent * 200 + latency < hang) ? latency : PacedCalls.NEVER;
	}

	/**
	 * The test's traffic in virtual time: a call sent every so often, the primary answering each at
	 * the time the test gave it, the clock moved a tick at a time once every answer due has arrived.
	 */
	private final class Traffic {

		final VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();

		private final LlmGateway gateway;

		private final LlmEndpoint endpoint;

		private final PacedCalls calls = new PacedCalls((id) -> HangEvidenceTests.this.primary);

		private final List<Integer> waitingAtOpening = new CopyOnWriteArrayList<>();

		volatile long openedAt = -1;

		volatile HangDescriptor evidenceSeen;

		Traffic(ApplicationContext context) {
			this.gateway = context.getBean(LlmGateway.class);
			this.endpoint = endpoint(context, "primary");
			this.endpoint.circuitBreaker().getEventPublisher().onStateTransition((event) -> {
				if (event.getStateTransition().getToState() == State.OPEN && this.openedAt < 0) {
					this.openedAt = now();
					for (EndpointAttempt attempt : this.endpoint.waitingForFirstToken()) {
						this.waitingAtOpening.add(PacedCalls.idOf(attempt.call().request()));
					}
				}
			});
		}

		/**
		 * Send a call every {@code every} ms until {@code until}, each answered by the primary
		 * {@code latency} ms after it was sent ({@link PacedCalls#NEVER}: held until the breaker lets it go).
		 */
		void run(long every, long until, LongUnaryOperator latency) {
			long start = now();
			while (now() < until) {
				if ((now() - start) % every == 0) {
					this.calls.send(this.gateway, now(), latency.applyAsLong(this.calls.sent()));
				}
				this.calls.settle(now());
				if (this.openedAt < 0) {
					HangDescriptor shown = this.endpoint.hang().describe();
					if (shown.waitingCalls() >= 5 && shown.oldestWait() != null
							&& shown.oldestWait().compareTo(Duration.ofSeconds(2)) > 0) {
						this.evidenceSeen = shown;
					}
				}
				this.time.advanceTimeBy(Duration.ofMillis(TICK));
			}
			this.calls.settle(now());
		}

		int sent() {
			return this.calls.sent();
		}

		/** @return the call's answer, waiting in real time for one that comes over real HTTP */
		ChatResponse answer(int id) {
			return this.calls.answer(id);
		}

		/** @return every answer that has come */
		List<ChatResponse> answers() {
			return IntStream.range(0, sent()).mapToObj(this.calls::answered).filter(Objects::nonNull).toList();
		}

		List<ChatResponse> heldAtOpening() {
			this.calls.settle(now());
			return this.waitingAtOpening.stream().map(this.calls::answered).toList();
		}

		List<Integer> unanswered() {
			return IntStream.range(0, sent()).filter((id) -> this.calls.answered(id) == null).boxed().toList();
		}

		private long now() {
			return this.time.now(TimeUnit.MILLISECONDS);
		}

	}

}
