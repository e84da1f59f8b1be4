package dev.llmresilience.engine;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings.Limits;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.openai.OpenAiClientFactory;
import dev.llmresilience.support.FakeUpstream.Gate;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.web.reactive.function.client.WebClient;

import static dev.llmresilience.support.Answers.completion;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With synthetic probes, a breaker moves from OPEN to HALF_OPEN once per open state, whoever asks:
 * the library when the wait has passed, or a user's call that asks for a permit then (on a route
 * whose only endpoint it is, users' calls keep reaching the open breaker). The outage replay found
 * a breaker stuck in HALF_OPEN for good when the two raced: the loser made a second move,
 * HALF_OPEN to HALF_OPEN, which Resilience4j does not publish, so the new half-open never got its
 * probes and refused users' calls forever. The race is made deterministic here by holding the
 * user's call inside its permit request (at the breaker's clock) while the library moves.
 */
class HalfOpenMoveTests {

	@Test
	void aUsersCallThatFoundTheBreakerOpenStartsNoSecondHalfOpenAfterTheLibraryMovedIt() throws Exception {
		Gate probes = new Gate(completion("Hi"));
		HoldingClock clock = new HoldingClock();
		List<ConnectionProvider> pools = new CopyOnWriteArrayList<>();
		try (MockWebServer server = new MockWebServer()) {
			server.setDispatcher(probes);
			server.start();
			LlmEndpoint endpoint = endpoint(server, clock, pools);
			CircuitBreaker breaker = endpoint.circuitBreaker();
			breaker.transitionToOpenState();

			List<Attempt> attempts = new CopyOnWriteArrayList<>();
			Thread user = new Thread(() -> endpoint.chat(ChatRequest.ofUser("hello"), attempts::add)
				.onErrorResume((error) -> Mono.empty())
				.block(Duration.ofSeconds(10)), "user-call");
			clock.holdNextReadOn(user);
			user.start();
			assertThat(clock.held.await(5, TimeUnit.SECONDS)).as("the user's call asks the open breaker for a permit")
				.isTrue();

			// the library moves the breaker when the 200 ms wait has passed and sends its three probes
			await().atMost(Duration.ofSeconds(5))
				.until(() -> breaker.getState() == State.HALF_OPEN && server.getRequestCount() == 3);
			CircuitBreaker.Metrics halfOpen = breaker.getMetrics();
			clock.release.countDown();
			user.join(TimeUnit.SECONDS.toMillis(10));

			assertThat(attempts).extracting(Attempt::outcome).containsExactly(Outcome.BREAKER_OPEN);
			assertThat(breaker.getMetrics()).as("still the half-open state whose probes are out, not a new one")
				.isSameAs(halfOpen);
			assertThat(server.getRequestCount()).as("the three probes, no user call").isEqualTo(3);
			probes.open();
			await().atMost(Duration.ofSeconds(5)).until(() -> breaker.getState() == State.CLOSED);
			assertThat(endpoint.probes().succeeded()).isEqualTo(3);
		}
		finally {
			probes.open();
			pools.forEach(ConnectionProvider::dispose);
		}
	}

	private static LlmEndpoint endpoint(MockWebServer server, Clock clock, List<ConnectionProvider> pools) {
		EndpointFactory factory = new EndpointFactory(CircuitBreakerRegistry.ofDefaults(), RetryRegistry.ofDefaults(),
				BulkheadRegistry.ofDefaults(), new FailureClassifier(), clock, () -> 0.5);
		EndpointSettings settings = EndpointSettings
			.builder("primary", URI.create(server.url("/v1").toString()), "primary-model")
			.timeouts(new EndpointSettings.Timeouts(Duration.ofSeconds(30), Duration.ofSeconds(2), Duration.ofSeconds(30),
					Duration.ofSeconds(30), true))
			.limits(Limits.DEFAULT.withMaxResponseSize(1 << 20))
			.circuitBreaker(new EndpointSettings.CircuitBreakerSettings(20, 20, 50f, Duration.ofMillis(200), 3,
					Duration.ofSeconds(60), 100f, EndpointSettings.Probe.SYNTHETIC))
			.retry(TestEndpoints.retry(1))
			.build();
		ConnectionProvider pool = OpenAiClientFactory.connectionProvider(settings.client());
		pools.add(pool);
		return factory.create(settings,
				new OpenAiClientFactory(new UpstreamFailures(Clock.systemUTC())).create(settings.client(), WebClient.builder(), pool));
	}

	/** The breaker's clock: real time, but its next read on one thread waits until released. */
	private static final class HoldingClock extends Clock {

		final CountDownLatch held = new CountDownLatch(1);

		final CountDownLatch release = new CountDownLatch(1);

		private final AtomicReference<Thread> holding = new AtomicReference<>();

		void holdNextReadOn(Thread thread) {
			this.holding.set(thread);
		}

		@Override
		public Instant instant() {
			if (this.holding.compareAndSet(Thread.currentThread(), null)) {
				this.held.countDown();
				try {
					this.release.await(10, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			return Instant.now();
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
