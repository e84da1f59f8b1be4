package dev.llmresilience.openaiapi;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;

import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.support.FakeUpstream;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Who the API lets in (a bearer key of the configured list, nothing else, and no key shown), and
 * the wait a busy answer advises: from the route's breakers, measured on an injected clock.
 */
class ClientKeysAndBreakerWaitsTests {

	@Test
	void acceptsExactlyTheConfiguredBearerKeys() {
		ClientKeys keys = new ClientKeys(List.of("key-one-abcdef", " key-two-123456 "));
		assertThat(keys.accepts("Bearer key-one-abcdef")).isTrue();
		assertThat(keys.accepts("bearer key-two-123456")).isTrue();
		assertThat(keys.accepts("Bearer key-one-abcde")).isFalse();
		assertThat(keys.accepts("Bearer key-one-abcdefg")).isFalse();
		assertThat(keys.accepts("key-one-abcdef")).isFalse();
		assertThat(keys.accepts("Basic key-one-abcdef")).isFalse();
		assertThat(keys.accepts("Bearer ")).isFalse();
		assertThat(keys.accepts(null)).isFalse();
		assertThat(keys.toString()).doesNotContain("key-one").doesNotContain("key-two");
		assertThatIllegalArgumentException().isThrownBy(() -> new ClientKeys(List.of()));
		assertThatIllegalArgumentException().isThrownBy(() -> new ClientKeys(List.of("ok-key", " ")));
	}

	@Test
	void waitIsWhatIsLeftOfTheSoonestOpenBreakersWaitDuration() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			upstreams.runner()
				.withPropertyValues("llm.endpoints.backup.circuit-breaker.wait-duration-in-open-state=60s", "llm.routes.only-backup=backup")
				.run((context) -> {
					TestClock clock = new TestClock();
					EndpointRegistry registry = context.getBean(EndpointRegistry.class);
					BreakerWaits waits = new BreakerWaits(registry, clock);
					assertThat(waits.untilNextCall("default")).hasValue(BreakerWaits.SOON);
					FakeUpstream.endpoint(context, "primary").circuitBreaker().transitionToOpenState();
					FakeUpstream.endpoint(context, "backup").circuitBreaker().transitionToOpenState();
					clock.advance(Duration.ofSeconds(10));
					// primary waits 30s (built-in), backup 60s: 20s left of the primary's wait
					assertThat(waits.untilNextCall("default")).hasValue(Duration.ofSeconds(20));
					assertThat(waits.untilNextCall("only-backup")).hasValue(Duration.ofSeconds(50));
					clock.advance(Duration.ofSeconds(40));
					assertThat(waits.untilNextCall("default")).hasValue(Duration.ZERO);
					FakeUpstream.endpoint(context, "primary").circuitBreaker().transitionToForcedOpenState();
					assertThat(waits.untilNextCall("default")).hasValue(Duration.ofSeconds(10));
					FakeUpstream.endpoint(context, "backup").circuitBreaker().transitionToForcedOpenState();
					assertThat(waits.untilNextCall("default")).isEmpty();
					assertThat(waits.untilNextCall("no-such-route")).isEmpty();
				});
		}
	}

	private static final class TestClock extends Clock {

		private Instant now = Instant.parse("2026-11-29T12:00:00Z");

		void advance(Duration duration) {
			this.now = this.now.plus(duration);
		}

		@Override
		public Instant instant() {
			return this.now;
		}

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			return this;
		}

	}

}
