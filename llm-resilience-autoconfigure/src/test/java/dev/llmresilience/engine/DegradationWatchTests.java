package dev.llmresilience.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmUnavailableException;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.MutableClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The degradation watch on a clock that only moves when told to: the share of degraded answers
 * over the window, the run of only degraded answers, and the WARN and INFO an operator reads.
 */
@ExtendWith(OutputCaptureExtension.class)
class DegradationWatchTests {

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
	void shareIsTheDegradedFractionOfTheAnswersInTheWindow() {
		withWatch(Duration.ofMinutes(2), (watch) -> {
			assertThat(watch.route("default").degradedShare()).isNull();
			answer(watch, Tier.PRIMARY, Tier.PRIMARY, Tier.PRIMARY, Tier.FALLBACK);
			RouteDegradation route = watch.route("default");
			assertThat(route.answers()).isEqualTo(4);
			assertThat(route.degraded()).isEqualTo(1);
			assertThat(route.degradedShare()).isEqualTo(0.25);
			this.clock.advance(Duration.ofMinutes(4));
			answer(watch, Tier.CACHED);
			assertThat(watch.route("default").degradedShare()).isEqualTo(0.4);
			this.clock.advance(Duration.ofMinutes(2));
			assertThat(watch.route("default").degradedShare()).as("the first four left the 5m window").isEqualTo(1.0);
			this.clock.advance(Duration.ofMinutes(6));
			assertThat(watch.route("default").answers()).isZero();
			assertThat(watch.route("default").degradedShare()).isNull();
			assertThat(watch.route("unknown")).isNull();
		});
	}

	@Test
	void aRouteAnsweringOnlyDegradedPastWarnAfterIsReportedOnceAtWarnAndItsRecoveryAtInfo(CapturedOutput output) {
		withWatch(Duration.ofMinutes(2), (watch) -> {
			answer(watch, Tier.FALLBACK);
			this.clock.advance(Duration.ofMinutes(1));
			answer(watch, Tier.FALLBACK);
			assertThat(lines(output, "WARN")).isEmpty();
			this.clock.advance(Duration.ofSeconds(61));
			answer(watch, Tier.BUSY, Tier.FALLBACK);
			this.clock.advance(Duration.ofSeconds(30));
			RouteDegradation route = watch.route("default");
			assertThat(route.warned()).isTrue();
			assertThat(route.onlyDegradedSince()).isEqualTo(START);
			assertThat(route.onlyDegradedFor()).isEqualTo(Duration.ofSeconds(151));
			assertThat(route.onlyDegradedTiers()).containsEntry("FALLBACK", 3L).containsEntry("BUSY", 1L);
			answer(watch, Tier.PRIMARY);
			assertThat(watch.route("default").onlyDegradedSince()).isNull();
			assertThat(watch.route("default").onlyDegradedFor()).isZero();
		});
		assertThat(lines(output, "WARN")).singleElement()
			.isEqualTo("LLM route 'default' has answered only degraded for 2m 1s (FALLBACK 2, BUSY 1): its first endpoint "
					+ "'primary' has not answered since 2026-03-01T12:00:00Z (its breaker is CLOSED); "
					+ "llm.degradation.warn-after is 2m");
		assertThat(lines(output, "INFO")).singleElement()
			.isEqualTo("LLM route 'default' answers from its first endpoint again, after 2m 31s of degraded answers "
					+ "(FALLBACK 3, BUSY 1)");
	}

	@Test
	void aPrimaryAnswerInBetweenStartsTheRunAnew(CapturedOutput output) {
		withWatch(Duration.ofMinutes(2), (watch) -> {
			answer(watch, Tier.FALLBACK);
			this.clock.advance(Duration.ofSeconds(90));
			answer(watch, Tier.PRIMARY);
			this.clock.advance(Duration.ofSeconds(60));
			answer(watch, Tier.FALLBACK);
			this.clock.advance(Duration.ofSeconds(60));
			answer(watch, Tier.FALLBACK);
			assertThat(watch.route("default").onlyDegradedFor()).isEqualTo(Duration.ofSeconds(60));
			assertThat(watch.route("default").warned()).isFalse();
		});
		assertThat(lines(output, "WARN")).isEmpty();
	}

	@Test
	void busyAsAnErrorIsDegradedButACallersOwnErrorIsNot() {
		withWatch(Duration.ofMinutes(2), (watch) -> {
			watch.onError("default", new LlmUnavailableException("default", List.of()));
			watch.onError("default", new LlmInvalidRequestException("bad", "primary", 400, null));
			assertThat(watch.route("default").answers()).isEqualTo(1);
			assertThat(watch.route("default").onlyDegradedTiers()).containsExactly(Map.entry("BUSY", 1L));
		});
	}

	@Test
	void warnAfterZeroNeverWarns(CapturedOutput output) {
		withWatch(Duration.ZERO, (watch) -> {
			answer(watch, Tier.FALLBACK);
			this.clock.advance(Duration.ofHours(1));
			answer(watch, Tier.FALLBACK);
			assertThat(watch.route("default").onlyDegradedFor()).isEqualTo(Duration.ofHours(1));
		});
		assertThat(lines(output, "WARN")).isEmpty();
	}

	private void withWatch(Duration warnAfter, Consumer<DegradationWatch> test) {
		this.upstreams.runner().run((context) -> test.accept(new DegradationWatch(context.getBean(EndpointRegistry.class),
				Duration.ofMinutes(5), warnAfter, this.clock)));
	}

	private static void answer(DegradationWatch watch, Tier... tiers) {
		for (Tier tier : tiers) {
			watch.onResponse("default", ChatResponse.builder()
				.content("text")
				.endpoint((tier == Tier.BUSY) ? null : "primary")
				.tier(tier)
				.latency(Duration.ofMillis(5))
				.build());
		}
	}

	private static List<String> lines(CapturedOutput output, String level) {
		return output.getAll()
			.lines()
			.filter((line) -> line.contains(" " + level + " ") && line.contains("LLM route"))
			.map((line) -> line.substring(line.indexOf("LLM route")))
			.toList();
	}

}
