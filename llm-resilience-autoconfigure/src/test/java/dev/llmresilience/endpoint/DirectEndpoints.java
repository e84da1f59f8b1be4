package dev.llmresilience.endpoint;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.DoubleSupplier;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.protocol.ApiKey;
import dev.llmresilience.protocol.OpenAiClientFactory;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import mockwebserver3.MockWebServer;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.web.reactive.function.client.WebClient;

/**
 * Endpoints built directly by an {@link EndpointFactory} with an injected clock and jitter
 * source, talking to a local server: for tests that move time instead of sleeping.
 */
final class DirectEndpoints implements AutoCloseable {

	/** The documented circuit-breaker defaults (docs/configuration.md). */
	static final EndpointSettings.CircuitBreakerSettings DEFAULT_BREAKER = new EndpointSettings.CircuitBreakerSettings(20,
			20, 50f, Duration.ofSeconds(30), 3, Duration.ofSeconds(60), 100f);

	final MutableClock clock = new MutableClock(Instant.parse("2026-03-01T12:00:00Z"));

	private final EndpointFactory factory;

	private final List<ConnectionProvider> pools = new ArrayList<>();

	DirectEndpoints(DoubleSupplier random) {
		this.factory = new EndpointFactory(CircuitBreakerRegistry.ofDefaults(), RetryRegistry.ofDefaults(),
				BulkheadRegistry.ofDefaults(), new FailureClassifier(this.clock), this.clock, random);
	}

	EndpointFactory factory() {
		return this.factory;
	}

	/**
	 * Retry settings with millisecond backoffs.
	 * @param maxAttempts attempts in all
	 * @return the settings
	 */
	static EndpointSettings.RetrySettings retry(int maxAttempts) {
		return new EndpointSettings.RetrySettings(maxAttempts, Duration.ofMillis(1), 2.0, Duration.ofMillis(4), 0.25,
				Duration.ofSeconds(10));
	}

	LlmEndpoint create(MockWebServer server, EndpointSettings.CircuitBreakerSettings breaker,
			EndpointSettings.RetrySettings retry) {
		EndpointSettings settings = new EndpointSettings("direct", URI.create(server.url("/v1").toString()),
				ApiKey.of(null), "direct-model", OpenAiClientFactory.PROTOCOL, 0, null, true, Map.of(), null,
				Duration.ofSeconds(5), Duration.ofSeconds(2), Duration.ofSeconds(30), Duration.ofSeconds(30), 1 << 20,
				breaker, retry, new EndpointSettings.BulkheadSettings(50, Duration.ZERO));
		ConnectionProvider pool = OpenAiClientFactory.connectionProvider(settings.client());
		this.pools.add(pool);
		OpenAiClientFactory clients = new OpenAiClientFactory(new FailureClassifier(this.clock));
		return this.factory.create(settings, clients.create(settings.client(), WebClient.builder(), pool));
	}

	/**
	 * Make one call and wait for it.
	 * @param endpoint the endpoint
	 * @return the outcome of each attempt
	 */
	static List<Outcome> call(LlmEndpoint endpoint) {
		List<Attempt> attempts = new ArrayList<>();
		endpoint.chat(ChatRequest.ofUser("hello"), attempts::add)
			.onErrorResume((error) -> Mono.empty())
			.block(Duration.ofSeconds(10));
		return attempts.stream().map(Attempt::outcome).toList();
	}

	@Override
	public void close() {
		this.pools.forEach(ConnectionProvider::dispose);
	}

	/** A clock that only moves when told to. */
	static final class MutableClock extends Clock {

		private volatile Instant now;

		MutableClock(Instant start) {
			this.now = start;
		}

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
