package dev.llmresilience.redis;

import java.time.Duration;

import dev.llmresilience.support.MutableClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * What the WARNs of a Redis outage say: why Redis is unavailable and how long it was, in words and
 * units people read ({@code 250 ms}, {@code 1 min 4 s}), not Reactor's and ISO-8601's.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisAvailabilityTests {

	private final MutableClock clock = MutableClock.at("2026-01-01T00:00:00Z");

	@Test
	void aCommandThatTimedOutIsSaidInMillisecondsAndTheOutageInMinutesAndSeconds(CapturedOutput output) {
		RedisAvailability availability = new RedisAvailability(this.clock);
		availability.up("connected");
		// what a heartbeat's block(250ms) throws when Redis does not answer
		Throwable timeout = catchThrowable(() -> Mono.never().block(Duration.ofMillis(250)));
		availability.down(timeout);
		assertThat(availability.problem()).isEqualTo("no answer within 250 ms");
		assertThat(output).contains("Shared LLM state on Redis is unavailable (no answer within 250 ms)")
			.doesNotContain("NANOSECONDS");
		this.clock.advance(Duration.ofMillis(64_163));
		availability.up("connected");
		assertThat(output).contains("Shared LLM state on Redis is available again after 1 min 4 s:").doesNotContain("PT1M");
	}

	@Test
	void aTimeoutOperatorIsSaidInMilliseconds() {
		Throwable timeout = catchThrowable(() -> Mono.never().timeout(Duration.ofMillis(300)).block());
		assertThat(RedisAvailability.describe(timeout)).isEqualTo("no answer within 300 ms");
	}

	@Test
	void durationsReadAsPeopleWriteThem() {
		assertThat(RedisAvailability.human(Duration.ofMillis(250))).isEqualTo("250 ms");
		assertThat(RedisAvailability.human(Duration.ofMillis(4_900))).isEqualTo("4 s");
		assertThat(RedisAvailability.human(Duration.ofSeconds(60))).isEqualTo("1 min");
		assertThat(RedisAvailability.human(Duration.ofSeconds(64))).isEqualTo("1 min 4 s");
		assertThat(RedisAvailability.human(Duration.ofMinutes(125))).isEqualTo("2 h 5 min");
	}

}
