package dev.llmresilience.benchmarks;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;

import dev.llmresilience.engine.BenchmarkAccess;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.ApiKey;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.openai.OpenAiClientFactory;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.web.reactive.function.client.WebClient;

/**
 * Endpoints and gateways built the way {@code LlmAutoConfiguration} builds them, without Spring:
 * the built-in defaults of docs/configuration.md, optionally time-scaled.
 */
final class Endpoints implements AutoCloseable {

	/** {@code llm.gateway.deadline}'s default. */
	static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(90);

	/**
	 * {@code -Dliveness=fixed}: the fixed first-token timeout alone, for a run to compare with (no
	 * hang evidence, probes waiting the whole first-token timeout, released calls refused by a full
	 * bulkhead at once).
	 */
	static final boolean FIXED = "fixed".equals(System.getProperty("liveness"));

	private final FailureClassifier classifier = new FailureClassifier();

	private final BiFunction<EndpointSettings, LlmClient, LlmEndpoint> factory = BenchmarkAccess.endpoints(this.classifier);

	private final OpenAiClientFactory clients = new OpenAiClientFactory(new UpstreamFailures(Clock.systemUTC()));

	private final List<ConnectionProvider> pools = new ArrayList<>();

	/**
	 * Settings with every value at its built-in default (each settings record's {@code DEFAULT}), each
	 * duration multiplied by {@code scale}: timeout 60 s, connect 5 s, first token 10 s, stream idle
	 * 30 s, chat sent upstream as a stream, breaker window 20 at 50 %, 30 s open, 3 synthetic probes,
	 * slow call 60 s, 3 attempts with backoff 500 ms x2 up to 8 s, bulkhead of
	 * {@code maxConcurrentCalls} whose released calls wait 2 s for a slot, hang evidence at 3 x p99 of
	 * the first tokens (at least 2 s, 5 calls waiting), probes bounded at least 3 s.
	 * @param name the endpoint's name
	 * @param baseUrl its base URL
	 * @param scale 1 for the defaults, 0.01 for the outage replay's 1/100 time
	 * @param maxConcurrentCalls the bulkhead (default 50)
	 * @return the settings
	 */
	static EndpointSettings settings(String name, String baseUrl, double scale, int maxConcurrentCalls) {
		return settings(name, baseUrl, scale, maxConcurrentCalls, true);
	}

	/**
	 * The {@link #settings(String, String, double, int) built-in defaults}, but for
	 * {@code upstream-streaming}.
	 * @param name the endpoint's name
	 * @param baseUrl its base URL
	 * @param scale 1 for the defaults
	 * @param maxConcurrentCalls the bulkhead (default 50)
	 * @param upstreamStreaming whether {@code chat} goes upstream as a stream (default true); false
	 * sends it as one JSON request answered by one JSON completion
	 * @return the settings
	 */
	static EndpointSettings settings(String name, String baseUrl, double scale, int maxConcurrentCalls,
			boolean upstreamStreaming) {
		EndpointSettings.Timeouts timeouts = EndpointSettings.Timeouts.DEFAULT;
		EndpointSettings.CircuitBreakerSettings breaker = EndpointSettings.CircuitBreakerSettings.DEFAULT;
		EndpointSettings.RetrySettings retry = EndpointSettings.RetrySettings.DEFAULT;
		EndpointSettings.Liveness liveness = EndpointSettings.Liveness.DEFAULT;
		return EndpointSettings.builder(name, URI.create(baseUrl), name + "-model")
			.apiKey(ApiKey.of("sk-bench"))
			.timeouts(new EndpointSettings.Timeouts(scaled(timeouts.timeout(), scale),
					scaled(timeouts.connectTimeout(), scale), scaled(timeouts.firstTokenTimeout(), scale),
					scaled(timeouts.streamIdleTimeout(), scale), upstreamStreaming))
			.circuitBreaker(new EndpointSettings.CircuitBreakerSettings(breaker.slidingWindowSize(),
					breaker.minimumNumberOfCalls(), breaker.failureRateThreshold(),
					scaled(breaker.waitDurationInOpenState(), scale), breaker.permittedCallsInHalfOpenState(),
					scaled(breaker.slowCallDurationThreshold(), scale), breaker.slowCallRateThreshold(), breaker.probe(),
					// -DstartOrderWaitMillis=0 counts calls as they end, for an A/B of the start order's cost
					Duration.ofMillis(Long.getLong("startOrderWaitMillis", breaker.startOrderWait().toMillis()))))
			.retry(new EndpointSettings.RetrySettings(retry.maxAttempts(), scaled(retry.initialBackoff(), scale),
					retry.multiplier(), scaled(retry.maxBackoff(), scale), retry.jitter(),
					scaled(retry.maxRetryAfter(), scale)))
			.bulkhead(new EndpointSettings.BulkheadSettings(maxConcurrentCalls, Duration.ZERO,
					FIXED ? Duration.ZERO : scaled(EndpointSettings.BulkheadSettings.DEFAULT.releasedCallsWait(), scale)))
			.liveness(FIXED
					? new EndpointSettings.Liveness(false, liveness.p99Multiple(), scaled(liveness.hangFloor(), scale),
							liveness.minWaitingCalls(), scaled(timeouts.firstTokenTimeout(), scale))
					: new EndpointSettings.Liveness(liveness.hangDetection(), liveness.p99Multiple(),
							scaled(liveness.hangFloor(), scale), liveness.minWaitingCalls(), scaled(liveness.probeFloor(), scale)))
			.build();
	}

	/** The settings the gateway's endpoints run with, as the run's log should show them. */
	static String describe(EndpointSettings settings) {
		return String.format(Locale.ROOT,
				"timeout %s, connect %s, first token %s, stream idle %s, upstream streaming %s, breaker %s, retry %s, bulkhead %s, liveness %s",
				settings.timeouts().timeout(), settings.timeouts().connectTimeout(), settings.timeouts().firstTokenTimeout(),
				settings.timeouts().streamIdleTimeout(), settings.timeouts().upstreamStreaming(), settings.circuitBreaker(),
				settings.retry(), settings.bulkhead(), settings.liveness());
	}

	static EndpointSettings settings(String name, String baseUrl) {
		return settings(name, baseUrl, 1.0, 50);
	}

	static Duration scaled(Duration duration, double scale) {
		return Duration.ofNanos(Math.round(duration.toNanos() * scale));
	}

	/**
	 * An endpoint over the given client.
	 * @param settings its settings
	 * @param client its transport
	 * @return the endpoint
	 */
	LlmEndpoint endpoint(EndpointSettings settings, LlmClient client) {
		return this.factory.apply(settings, client);
	}

	/**
	 * An endpoint over the real OpenAI-compatible client, with its own connection pool, as the
	 * auto-configuration makes it.
	 * @param settings its settings
	 * @return the endpoint
	 */
	LlmEndpoint http(EndpointSettings settings) {
		return http(settings, UnaryOperator.identity());
	}

	/**
	 * An endpoint over the real OpenAI-compatible client, wrapped (to watch what reaches it).
	 * @param settings its settings
	 * @param wrapper wraps the client
	 * @return the endpoint
	 */
	LlmEndpoint http(EndpointSettings settings, UnaryOperator<LlmClient> wrapper) {
		ConnectionProvider pool = OpenAiClientFactory.connectionProvider(settings.client());
		this.pools.add(pool);
		return this.factory.apply(settings, wrapper.apply(this.clients.create(settings.client(), WebClient.builder(), pool)));
	}

	/**
	 * An endpoint over the real OpenAI-compatible client on a pool the caller made (for instance
	 * {@link OpenAiClientFactory#connectionProvider}'s, mutated to report its metrics); closed with
	 * the others.
	 * @param settings its settings
	 * @param pool its connection pool
	 * @return the endpoint
	 */
	LlmEndpoint http(EndpointSettings settings, ConnectionProvider pool) {
		this.pools.add(pool);
		return this.factory.apply(settings, this.clients.create(settings.client(), WebClient.builder(), pool));
	}

	/**
	 * An endpoint over the real OpenAI-compatible client that learns its provider's rate limits
	 * from the answers' headers, as the auto-configuration makes it.
	 * @param settings its settings
	 * @return the endpoint
	 */
	LlmEndpoint learning(EndpointSettings settings) {
		ConnectionProvider pool = OpenAiClientFactory.connectionProvider(settings.client());
		this.pools.add(pool);
		return BenchmarkAccess.learning(settings, this.classifier,
				(client) -> this.clients.create(client, WebClient.builder(), pool));
	}

	/**
	 * A gateway with no cache, no deferral, no guard, no listener and no observation (the defaults
	 * but for the deferred queue, which only non-deferrable requests reach here anyway).
	 * @param routes the routes
	 * @param deadline {@code llm.gateway.deadline}
	 * @param endpoints the endpoints
	 * @return the gateway
	 */
	static LlmGateway gateway(Map<String, List<String>> routes, Duration deadline, LlmEndpoint... endpoints) {
		return BenchmarkAccess.gateway(new EndpointRegistry(List.of(endpoints), routes, List.of()), deadline);
	}

	@Override
	public void close() {
		this.pools.forEach(ConnectionProvider::dispose);
	}

}
