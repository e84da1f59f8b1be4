package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.DoubleSupplier;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.core.IntervalBiFunction;
import io.github.resilience4j.core.functions.Either;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

import static dev.llmresilience.engine.TestEndpoints.DEFAULT_BREAKER;
import static dev.llmresilience.engine.TestEndpoints.retry;
import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An endpoint's retry: its backoff (checked on the interval function with an injected jitter
 * source, without waiting it out), and its place outside the circuit breaker, so that a retry is
 * never made while the breaker is open.
 */
class EndpointRetryTests {

	private static final EndpointSettings.RetrySettings DEFAULT_RETRY = new EndpointSettings.RetrySettings(3,
			Duration.ofMillis(500), 2.0, Duration.ofSeconds(8), 0.25, Duration.ofSeconds(10));

	private static final LlmUpstreamException SERVER_ERROR = new LlmUpstreamException("direct", Outcome.SERVER_ERROR,
			500, null, "Provider error (HTTP 500)", null);

	private final MockWebServer server = new MockWebServer();

	private TestEndpoints endpoints;

	@BeforeEach
	void start() throws Exception {
		this.server.start();
	}

	@AfterEach
	void stop() {
		if (this.endpoints != null) {
			this.endpoints.close();
		}
		this.server.close();
	}

	@Test
	void backoffGrowsByTheMultiplierUpToMaxBackoff() {
		IntervalBiFunction<Object> interval = interval(() -> 0.5);
		assertThat(List.of(1, 2, 3, 4, 5, 6, 7).stream().map((retry) -> interval.apply(retry, Either.left(SERVER_ERROR))))
			.containsExactly(500L, 1000L, 2000L, 4000L, 8000L, 8000L, 8000L);
	}

	@Test
	void jitterSpreadsEachWaitByAtMostAQuarter() {
		assertThat(interval(() -> 0.0).apply(1, Either.left(SERVER_ERROR))).isEqualTo(375L);
		assertThat(interval(() -> 0.999_999).apply(1, Either.left(SERVER_ERROR))).isEqualTo(625L);
		Random random = new Random(42);
		IntervalBiFunction<Object> interval = interval(random::nextDouble);
		for (int i = 0; i < 1000; i++) {
			int retry = 1 + (i % 4);
			long base = 500L << (retry - 1);
			assertThat(interval.apply(retry, Either.left(SERVER_ERROR))).isBetween(Math.round(base * 0.75),
					Math.round(base * 1.25));
		}
	}

	@Test
	void jitteredWaitNeverExceedsMaxBackoff() {
		IntervalBiFunction<Object> interval = interval(() -> 0.999_999);
		assertThat(interval.apply(5, Either.left(SERVER_ERROR))).isLessThanOrEqualTo(8000L);
		assertThat(interval.apply(9, Either.left(SERVER_ERROR))).isLessThanOrEqualTo(8000L);
		assertThat(interval(() -> 0.0).apply(9, Either.left(SERVER_ERROR))).isEqualTo(6000L);
	}

	@Test
	void retryAfterReplacesTheBackoffAndIsNotJittered() {
		LlmUpstreamException rateLimited = new LlmUpstreamException("direct", Outcome.RATE_LIMITED, 429,
				Duration.ofSeconds(3), "Rate limited (HTTP 429)", null);
		assertThat(interval(() -> 0.0).apply(1, Either.left(rateLimited))).isEqualTo(3000L);
		assertThat(interval(() -> 0.999_999).apply(2, Either.left(rateLimited))).isEqualTo(3000L);
	}

	@Test
	void retriesWaitTheComputedBackoffBetweenAttempts() {
		this.endpoints = new TestEndpoints(() -> 0.5);
		LlmEndpoint endpoint = this.endpoints.create(this.server, DEFAULT_BREAKER, new EndpointSettings.RetrySettings(3,
				Duration.ofMillis(10), 2.0, Duration.ofSeconds(1), 0.25, Duration.ofSeconds(10)));
		List<Duration> waits = new CopyOnWriteArrayList<>();
		endpoint.retry().getEventPublisher().onRetry((event) -> waits.add(event.getWaitInterval()));
		this.server.enqueue(error(500, "server_error"));
		this.server.enqueue(error(502, "bad_gateway"));
		this.server.enqueue(completion("third time"));
		StepVerifier.create(endpoint.chat(ChatRequest.ofUser("hello"), (attempt) -> {
		})).assertNext((completion) -> assertThat(completion.content()).isEqualTo("third time")).verifyComplete();
		assertThat(waits).containsExactly(Duration.ofMillis(10), Duration.ofMillis(20));
		assertThat(this.server.getRequestCount()).isEqualTo(3);
	}

	@Test
	void retryIsNotMadeOnceTheFailuresItRetriesHaveOpenedTheBreaker() {
		this.endpoints = new TestEndpoints(() -> 0.5);
		LlmEndpoint endpoint = this.endpoints.create(this.server,
				new EndpointSettings.CircuitBreakerSettings(2, 2, 50f, Duration.ofSeconds(30), 3, Duration.ofSeconds(60),
						100f),
				retry(3));
		this.server.enqueue(error(500, "server_error"));
		this.server.enqueue(error(500, "server_error"));
		this.server.enqueue(completion("never asked for"));
		List<Attempt> attempts = new CopyOnWriteArrayList<>();
		StepVerifier.create(endpoint.chat(ChatRequest.ofUser("hello"), attempts::add))
			.expectError(CallNotPermittedException.class)
			.verify(Duration.ofSeconds(10));
		assertThat(attempts).extracting(Attempt::outcome)
			.containsExactly(Outcome.SERVER_ERROR, Outcome.SERVER_ERROR, Outcome.BREAKER_OPEN);
		assertThat(this.server.getRequestCount()).isEqualTo(2);
	}

	@Test
	void breakerForcedOpenBetweenAttemptsStopsTheRetryAndIsNotRetriedItself() {
		this.endpoints = new TestEndpoints(() -> 0.5);
		LlmEndpoint endpoint = this.endpoints.create(this.server, DEFAULT_BREAKER, retry(3));
		this.server.enqueue(error(503, "overloaded"));
		this.server.enqueue(completion("never asked for"));
		List<Attempt> attempts = new CopyOnWriteArrayList<>();
		StepVerifier.create(endpoint.chat(ChatRequest.ofUser("hello"), (attempt) -> {
			attempts.add(attempt);
			if (attempts.size() == 1) {
				endpoint.circuitBreaker().transitionToForcedOpenState();
			}
		})).expectError(CallNotPermittedException.class).verify(Duration.ofSeconds(10));
		assertThat(attempts).extracting(Attempt::outcome).containsExactly(Outcome.SERVER_ERROR, Outcome.BREAKER_OPEN);
		assertThat(this.server.getRequestCount()).isOne();
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfNotPermittedCalls()).isOne();
	}

	private static IntervalBiFunction<Object> interval(DoubleSupplier random) {
		TestEndpoints endpoints = new TestEndpoints(random);
		return endpoints.factory().retryConfig(DEFAULT_RETRY).getIntervalBiFunction();
	}

}
