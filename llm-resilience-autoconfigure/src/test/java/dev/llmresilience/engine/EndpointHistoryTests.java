package dev.llmresilience.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.function.BiConsumer;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmUnavailableException;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.MutableClock;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each endpoint's last 15 minutes on a clock that only moves when told to: the time its breaker
 * spent in each state per 10-second bucket, the calls that tried it first by tier, the outage that
 * began with its move out of CLOSED and the probe cycles since, and nothing kept past the window.
 */
class EndpointHistoryTests {

	private static final Instant START = Instant.parse("2026-03-01T12:00:00Z");

	private final MutableClock clock = new MutableClock(START);

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
	void eachBucketHoldsTheTimeTheBreakerSpentInEachState() {
		withHistory((history, primary) -> {
			this.clock.advance(Duration.ofSeconds(25));
			primary.transitionToOpenState();
			this.clock.advance(Duration.ofSeconds(40));
			primary.transitionToHalfOpenState();
			this.clock.advance(Duration.ofSeconds(5));
			primary.transitionToOpenState();
			this.clock.advance(Duration.ofSeconds(3));
			EndpointHistory.Timeline timeline = history.timeline("primary");
			assertThat(timeline.now()).isEqualTo(START.plusSeconds(73));
			// the newest bucket is the one now is in, [70s, 80s): the last of 90, the first 890s before it
			assertThat(timeline.start()).isEqualTo(START.plusSeconds(70 - 890));
			assertThat(timeline.states()).containsOnlyKeys("CLOSED", "OPEN", "HALF_OPEN");
			assertThat(timeline.states().values()).allSatisfy((series) -> assertThat(series).hasSize(90));
			assertThat(last(timeline.states().get("CLOSED"), 8)).containsExactly(10000, 10000, 5000, 0, 0, 0, 0, 0);
			assertThat(last(timeline.states().get("OPEN"), 8)).containsExactly(0, 0, 5000, 10000, 10000, 10000, 5000, 3000);
			assertThat(last(timeline.states().get("HALF_OPEN"), 8)).containsExactly(0, 0, 0, 0, 0, 0, 5000, 0);
			assertThat(Arrays.stream(timeline.states().get("CLOSED")).limit(82).sum())
				.as("nothing before the history started").isZero();
		});
	}

	@Test
	void theOutageIsTheMoveOutOfClosedThatBeganItWithTheProbeCyclesSince() {
		withHistory((history, primary) -> {
			assertThat(history.timeline("primary").outage()).isNull();
			primary.transitionToOpenState();
			for (int cycle = 0; cycle < 7; cycle++) {
				this.clock.advance(Duration.ofSeconds(30));
				primary.transitionToHalfOpenState();
				primary.transitionToOpenState();
			}
			EndpointHistory.Outage outage = history.timeline("primary").outage();
			assertThat(outage.began().from()).isEqualTo(State.CLOSED);
			assertThat(outage.began().to()).isEqualTo(State.OPEN);
			assertThat(outage.probes()).isEqualTo(7);
			assertThat(outage.firstProbe()).isNotNull();
			assertThat(outage.lastProbe()).isAfterOrEqualTo(outage.firstProbe());
			assertThat(outage.ended()).isNull();
			primary.transitionToHalfOpenState();
			primary.transitionToClosedState();
			EndpointHistory.Outage ended = history.timeline("primary").outage();
			assertThat(ended.began()).isEqualTo(outage.began());
			assertThat(ended.probes()).isEqualTo(8);
			assertThat(ended.ended()).isNotNull();
			primary.transitionToForcedOpenState();
			EndpointHistory.Outage next = history.timeline("primary").outage();
			assertThat(next.began().to()).as("the next outage replaces it").isEqualTo(State.FORCED_OPEN);
			assertThat(next.probes()).isZero();
			assertThat(next.ended()).isNull();
		});
	}

	@Test
	void answersAreCountedByTierForTheEndpointTheCallTriedFirst() {
		withHistory((history, primary) -> {
			answer(history, Tier.PRIMARY, "primary");
			answer(history, Tier.PRIMARY, "primary");
			this.clock.advance(Duration.ofSeconds(10));
			// refused by the primary's open breaker, answered by the backup: the primary's call, a fallback
			answer(history, Tier.FALLBACK, "primary", "backup");
			answer(history, Tier.DEFERRED, "primary", "backup");
			this.clock.advance(Duration.ofSeconds(10));
			history.onError("default", new LlmUnavailableException("default", List.of()));
			answer(history, Tier.PRIMARY, "backup");
			EndpointHistory.Timeline timeline = history.timeline("primary");
			assertThat(timeline.answers()).containsOnlyKeys("PRIMARY", "FALLBACK", "DEFERRED", "BUSY");
			assertThat(last(timeline.answers().get("PRIMARY"), 3)).containsExactly(2, 0, 0);
			assertThat(last(timeline.answers().get("FALLBACK"), 3)).containsExactly(0, 1, 0);
			assertThat(last(timeline.answers().get("DEFERRED"), 3)).containsExactly(0, 1, 0);
			assertThat(last(timeline.answers().get("BUSY"), 3)).as("no attempt: the route's first endpoint's")
				.containsExactly(0, 0, 1);
			assertThat(last(history.timeline("backup").answers().get("PRIMARY"), 1)).containsExactly(1);
		});
	}

	@Test
	void nothingIsKeptPastFifteenMinutes() {
		withHistory((history, primary) -> {
			answer(history, Tier.FALLBACK, "primary", "backup");
			primary.transitionToOpenState();
			this.clock.advance(Duration.ofMinutes(15));
			EndpointHistory.Timeline timeline = history.timeline("primary");
			assertThat(timeline.answers()).as("the answer's bucket is older than the window").isEmpty();
			assertThat(timeline.states()).containsOnlyKeys("OPEN");
			long[] open = timeline.states().get("OPEN");
			assertThat(open).hasSize(90);
			assertThat(Arrays.stream(open).limit(89)).allMatch((millis) -> millis == 10000);
			assertThat(open[89]).isZero();
			// two hours on, in every state in turn: still 90 buckets, the window's time exactly
			for (int i = 0; i < 720; i++) {
				this.clock.advance(Duration.ofSeconds(10));
				if (i % 2 == 0) {
					primary.transitionToHalfOpenState();
				}
				else {
					primary.transitionToOpenState();
				}
				answer(history, Tier.FALLBACK, "primary", "backup");
			}
			this.clock.advance(Duration.ofSeconds(5));
			EndpointHistory.Timeline later = history.timeline("primary");
			long total = later.states().values().stream().flatMapToLong(Arrays::stream).sum();
			assertThat(total).isEqualTo(89 * 10000 + 5000);
			assertThat(later.answers().get("FALLBACK")).hasSize(90);
			assertThat(Arrays.stream(later.answers().get("FALLBACK")).sum()).as("one a bucket").isEqualTo(90);
		});
	}

	private void withHistory(BiConsumer<EndpointHistory, CircuitBreaker> test) {
		// users' calls are the probes, so that the test alone moves the breaker
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.circuit-breaker.probe=requests").run((context) -> {
			EndpointHistory history = new EndpointHistory(context.getBean(EndpointRegistry.class), this.clock);
			test.accept(history, FakeUpstream.endpoint(context, "primary").circuitBreaker());
		});
	}

	// a call of the default route that tried the given endpoints in turn, answered by the last one
	private static void answer(EndpointHistory history, Tier tier, String... tried) {
		List<Attempt> attempts = Arrays.stream(tried)
			.map((endpoint) -> new Attempt(endpoint,
					endpoint.equals(tried[tried.length - 1]) ? Outcome.SUCCESS : Outcome.BREAKER_OPEN, Duration.ZERO))
			.toList();
		history.onResponse("default", ChatResponse.builder()
			.content("text")
			.endpoint(tried[tried.length - 1])
			.tier(tier)
			.latency(Duration.ofMillis(5))
			.attempts(attempts)
			.build());
	}

	private static long[] last(long[] series, int count) {
		return Arrays.copyOfRange(series, series.length - count, series.length);
	}

}
