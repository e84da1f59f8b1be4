package dev.llmresilience.engine;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ApiKey;
import dev.llmresilience.protocol.ClientSettings.Limits;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.openai.OpenAiClientFactory;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.MutableClock;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import mockwebserver3.MockWebServer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.web.reactive.function.client.WebClient;

/**
 * Endpoints built directly by an {@link EndpointFactory}, without the auto-configuration: with an
 * injected clock and jitter source, talking to a {@link FakeUpstream} server, for tests that move
 * time instead of sleeping; or around an in-process {@link FakeClient}, for tests in virtual time.
 */
public final class TestEndpoints implements AutoCloseable {

	/** The documented circuit-breaker defaults (docs/configuration.md). */
	public static final EndpointSettings.CircuitBreakerSettings DEFAULT_BREAKER = new EndpointSettings.CircuitBreakerSettings(20,
			20, 50f, Duration.ofSeconds(30), 3, Duration.ofSeconds(60), 100f);

	private final MutableClock clock = new MutableClock(Instant.parse("2026-03-01T12:00:00Z"));

	private final EndpointFactory factory;

	private final List<ConnectionProvider> pools = new ArrayList<>();

	/**
	 * Endpoints whose retries take their jitter from {@code random}, on a clock of their own.
	 * @param random the jitter source
	 */
	public TestEndpoints(DoubleSupplier random) {
		this.factory = new EndpointFactory(CircuitBreakerRegistry.ofDefaults(), RetryRegistry.ofDefaults(),
				BulkheadRegistry.ofDefaults(), new FailureClassifier(), this.clock, random);
	}

	public EndpointFactory factory() {
		return this.factory;
	}

	/** @return the clock of the endpoints' breakers and failure mapping, moved only by the test */
	public MutableClock clock() {
		return this.clock;
	}

	/**
	 * Retry settings with millisecond backoffs.
	 * @param maxAttempts attempts in all
	 * @return the settings
	 */
	public static EndpointSettings.RetrySettings retry(int maxAttempts) {
		return new EndpointSettings.RetrySettings(maxAttempts, Duration.ofMillis(1), 2.0, Duration.ofMillis(4), 0.25,
				Duration.ofSeconds(10));
	}

	/**
	 * An OpenAI-compatible endpoint {@code direct} on a server.
	 * @param server the server
	 * @param breaker its breaker's settings
	 * @param retry its retry's settings
	 * @return the endpoint
	 */
	public LlmEndpoint create(MockWebServer server, EndpointSettings.CircuitBreakerSettings breaker,
			EndpointSettings.RetrySettings retry) {
		EndpointSettings settings = EndpointSettings
			.builder("direct", URI.create(server.url("/v1").toString()), "direct-model")
			.timeouts(new EndpointSettings.Timeouts(Duration.ofSeconds(5), Duration.ofSeconds(2), Duration.ofSeconds(30),
					Duration.ofSeconds(30), true))
			.limits(Limits.DEFAULT.withMaxResponseSize(1 << 20))
			.circuitBreaker(breaker)
			.retry(retry)
			.build();
		ConnectionProvider pool = OpenAiClientFactory.connectionProvider(settings.client());
		this.pools.add(pool);
		OpenAiClientFactory clients = new OpenAiClientFactory(new UpstreamFailures(this.clock));
		return this.factory.create(settings, clients.create(settings.client(), WebClient.builder(), pool));
	}

	/**
	 * Make one call and wait for it.
	 * @param endpoint the endpoint
	 * @return the outcome of each attempt
	 */
	public static List<Outcome> call(LlmEndpoint endpoint) {
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

	/**
	 * Settings of a test endpoint: retries 1 ms apart without jitter, the built-in breaker defaults.
	 * @param name the name
	 * @param baseUrl the base URL
	 * @param firstTokenTimeout the first-token timeout
	 * @param streamIdleTimeout the idle timeout
	 * @param maxAttempts attempts in all
	 * @param maxConcurrentCalls the bulkhead's size
	 * @return the settings
	 */
	public static EndpointSettings settings(String name, String baseUrl, Duration firstTokenTimeout,
			Duration streamIdleTimeout, int maxAttempts, int maxConcurrentCalls) {
		return EndpointSettings.builder(name, URI.create(baseUrl), "m-" + name)
			.apiKey(ApiKey.of("sk-test-123456789"))
			.timeouts(new EndpointSettings.Timeouts(Duration.ofSeconds(60), Duration.ofSeconds(5), firstTokenTimeout,
					streamIdleTimeout, true))
			.circuitBreaker(DEFAULT_BREAKER)
			.retry(new EndpointSettings.RetrySettings(maxAttempts, Duration.ofMillis(1), 2.0, Duration.ofSeconds(8), 0,
					Duration.ofSeconds(10)))
			.bulkhead(new EndpointSettings.BulkheadSettings(maxConcurrentCalls, Duration.ZERO))
			.build();
	}

	/**
	 * An endpoint with its own breaker, retry and bulkhead.
	 * @param settings its settings
	 * @param client its client
	 * @return the endpoint
	 */
	public static LlmEndpoint endpoint(EndpointSettings settings, LlmClient client) {
		return new EndpointFactory(CircuitBreakerRegistry.ofDefaults(), RetryRegistry.ofDefaults(),
				BulkheadRegistry.ofDefaults(), new FailureClassifier(), Clock.systemUTC(), () -> 0.5)
			.create(settings, client);
	}

	/**
	 * A delta with text.
	 * @param text the text
	 * @return the delta
	 */
	public static CompletionDelta text(String text) {
		return new CompletionDelta(text, List.of(), null, null, null);
	}

	/**
	 * A delta with a finish reason.
	 * @param reason the reason
	 * @return the delta
	 */
	public static CompletionDelta finished(String reason) {
		return new CompletionDelta("", List.of(), reason, null, null);
	}

	/**
	 * A delta with token counts.
	 * @param prompt prompt tokens
	 * @param completion completion tokens
	 * @return the delta
	 */
	public static CompletionDelta counted(int prompt, int completion) {
		return new CompletionDelta("", List.of(), null, new Usage(prompt, completion), null);
	}

	/**
	 * An in-process client whose every streamed attempt is a new subscription to {@code stream}.
	 */
	public static final class FakeClient implements LlmClient {

		private final Supplier<Flux<CompletionDelta>> stream;

		private final AtomicInteger calls = new AtomicInteger();

		private final List<ChatRequest> requests = new CopyOnWriteArrayList<>();

		/**
		 * Create a client.
		 * @param stream the stream of each attempt
		 */
		public FakeClient(Supplier<Flux<CompletionDelta>> stream) {
			this.stream = stream;
		}

		@Override
		public Mono<Completion> chat(ChatRequest request) {
			return Mono.error(new UnsupportedOperationException("stream only"));
		}

		@Override
		public Flux<CompletionDelta> stream(ChatRequest request) {
			return Flux.defer(() -> {
				this.calls.incrementAndGet();
				this.requests.add(request);
				return this.stream.get();
			});
		}

		/**
		 * How many attempts were made.
		 * @return the count
		 */
		public int calls() {
			return this.calls.get();
		}

		/**
		 * The requests of every attempt.
		 * @return the requests
		 */
		public List<ChatRequest> requests() {
			return this.requests;
		}

	}

}
