package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.langchain4j.model.chat.ChatModel;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.BenchmarkAccess;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.engine.RouteBalancer;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGateway;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.reactor.bulkhead.operator.BulkheadOperator;
import io.github.resilience4j.reactor.circuitbreaker.operator.CircuitBreakerOperator;
import io.github.resilience4j.reactor.retry.RetryOperator;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

/**
 * The clients a Java team could put in front of an LLM instead of the starter, each built as its
 * documentation shows, with its own defaults but every timeout scaled like the servers' delays:
 * raw {@code WebClient}; {@code WebClient} with Resilience4j's breaker, bulkhead and retry wrapped
 * around it by hand; Spring AI 2.0's {@link OpenAiChatModel} (the OpenAI SDK inside, its default
 * retry of 3); LangChain4j's {@code OpenAiChatModel} (its default retry); and the gateway. With a
 * backup, each but the raw one falls back to it the simplest way its API allows (the decorators'
 * {@code onErrorResume}, a try/catch around the chat models). Every call is blocking, as an
 * application thread makes it.
 */
final class Peers implements AutoCloseable {

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");

	/** One peer: a blocking call that answers whether it got an answer. */
	interface Peer {

		String name();

		/**
		 * One call.
		 * @return true for an answer (of either endpoint), false for none (BUSY, or an error)
		 */
		boolean call();

	}

	private final double scale;

	private final Endpoints endpoints = new Endpoints();

	private final List<ConnectionProvider> pools = new ArrayList<>();

	Peers(double scale) {
		this.scale = scale;
	}

	private Duration scaled(Duration duration) {
		return Endpoints.scaled(duration, this.scale);
	}

	/** A plain WebClient; with {@code timeoutAndRetry}, 3 attempts of the scaled 60 s (Reactor's retry). */
	Peer raw(String url, boolean timeoutAndRetry) {
		ConnectionProvider pool = RawClient.pool("raw", 4096);
		this.pools.add(pool);
		RawClient raw = new RawClient(url, pool);
		Duration timeout = scaled(Duration.ofSeconds(60));
		Duration backoff = scaled(Duration.ofMillis(500));
		return peer("raw WebClient", () -> timeoutAndRetry
				? raw.chat().timeout(timeout).retryWhen(reactor.util.retry.Retry.backoff(2, backoff)) : raw.chat());
	}

	/**
	 * WebClient behind Resilience4j decorators written by hand (retry around breaker around
	 * bulkhead around a timeout, Resilience4j's recommended order), with the starter's numbers: a
	 * window of 20, 50 %, 30 s open, 3 attempts from 500 ms, 60 s timeout, and a bulkhead of 64 as the
	 * gateway's here.
	 */
	Peer resilience4j(String url, @Nullable String backupUrl) {
		Supplier<Mono<String>> primary = decorated("r4j-primary", url);
		Supplier<Mono<String>> backup = (backupUrl != null) ? decorated("r4j-backup", backupUrl) : null;
		return peer("Resilience4j by hand", () -> (backup != null)
				? primary.get().onErrorResume((error) -> backup.get()) : primary.get());
	}

	private Supplier<Mono<String>> decorated(String name, String url) {
		ConnectionProvider pool = RawClient.pool(name, 4096);
		this.pools.add(pool);
		RawClient raw = new RawClient(url, pool);
		CircuitBreaker breaker = CircuitBreaker.of(name, CircuitBreakerConfig.custom()
			.slidingWindowSize(20)
			.minimumNumberOfCalls(20)
			.failureRateThreshold(50)
			.waitDurationInOpenState(scaled(Duration.ofSeconds(30)))
			.permittedNumberOfCallsInHalfOpenState(3)
			.build());
		Bulkhead bulkhead = Bulkhead.of(name, BulkheadConfig.custom().maxConcurrentCalls(64).maxWaitDuration(Duration.ZERO).build());
		Retry retry = Retry.of(name, RetryConfig.custom()
			.maxAttempts(3)
			.intervalFunction(IntervalFunction.ofExponentialBackoff(scaled(Duration.ofMillis(500)), 2.0))
			.ignoreExceptions(CallNotPermittedException.class, BulkheadFullException.class)
			.build());
		Duration timeout = scaled(Duration.ofSeconds(60));
		return () -> raw.chat()
			.timeout(timeout)
			.transformDeferred(BulkheadOperator.of(bulkhead))
			.transformDeferred(CircuitBreakerOperator.of(breaker))
			.transformDeferred(RetryOperator.of(retry));
	}

	/** Spring AI 2.0's OpenAiChatModel: timeout scaled, the SDK's retries left at Spring AI's default (3). */
	Peer springAi(String url, @Nullable String backupUrl) {
		OpenAiChatModel primary = springAiModel(url);
		OpenAiChatModel backup = (backupUrl != null) ? springAiModel(backupUrl) : null;
		return new Blocking("Spring AI OpenAiChatModel", () -> {
			try {
				return primary.call(new Prompt("Hello")).getResult().getOutput().getText();
			}
			catch (RuntimeException ex) {
				if (backup == null) {
					throw ex;
				}
				return backup.call(new Prompt("Hello")).getResult().getOutput().getText();
			}
		});
	}

	private OpenAiChatModel springAiModel(String url) {
		return OpenAiChatModel.builder()
			.options(OpenAiChatOptions.builder()
				.baseUrl(url)
				.apiKey("sk-bench")
				.model("stub-model")
				.timeout(scaled(Duration.ofSeconds(60)))
				.build())
			.build();
	}

	/** LangChain4j's OpenAiChatModel: timeout scaled, its retries left at their default. */
	Peer langChain4j(String url, @Nullable String backupUrl) {
		ChatModel primary = langChain4jModel(url);
		ChatModel backup = (backupUrl != null) ? langChain4jModel(backupUrl) : null;
		return new Blocking("LangChain4j OpenAiChatModel", () -> {
			try {
				return primary.chat("Hello");
			}
			catch (RuntimeException ex) {
				if (backup == null) {
					throw ex;
				}
				return backup.chat("Hello");
			}
		});
	}

	private ChatModel langChain4jModel(String url) {
		return dev.langchain4j.model.openai.OpenAiChatModel.builder()
			.baseUrl(url)
			.apiKey("sk-bench")
			.modelName("stub-model")
			.timeout(scaled(Duration.ofSeconds(60)))
			.build();
	}

	/**
	 * The gateway over the real OpenAI-compatible client, the built-in defaults scaled (bulkhead 64,
	 * so that 64 callers are not cut to 50), optionally hedging.
	 */
	Peer gateway(String url, @Nullable String backupUrl, BenchmarkAccess.@Nullable Hedge hedge) {
		return gateway(hedge != null ? "gateway, hedging" : "llm-resilience gateway", url, backupUrl, hedge);
	}

	Peer gateway(String name, String url, @Nullable String backupUrl, BenchmarkAccess.@Nullable Hedge hedge) {
		LlmGateway gateway = gatewayOf(url, backupUrl, hedge);
		return peer(name, () -> gateway.chat(REQUEST).map((ChatResponse answer) -> answer.tier() != Tier.BUSY ? "ok" : ""));
	}

	/**
	 * The gateway of {@link #gateway(String, String, String, BenchmarkAccess.Hedge)}, for a caller
	 * that sends requests of its own.
	 */
	LlmGateway gatewayOf(String url, @Nullable String backupUrl, BenchmarkAccess.@Nullable Hedge hedge) {
		return gatewayOf(url, backupUrl, hedge, null);
	}

	/**
	 * The gateway of {@link #gatewayOf(String, String, BenchmarkAccess.Hedge)}, its endpoints'
	 * {@code first-token-timeout} set (as measured, already scaled), or the built-in one's for
	 * {@code null}.
	 */
	LlmGateway gatewayOf(String url, @Nullable String backupUrl, BenchmarkAccess.@Nullable Hedge hedge,
			@Nullable Duration firstTokenTimeout) {
		List<LlmEndpoint> members = new ArrayList<>();
		members.add(this.endpoints.http(withFirstTokenTimeout(Endpoints.settings("primary", url, this.scale, 64),
				firstTokenTimeout)));
		if (backupUrl != null) {
			members.add(this.endpoints.http(withFirstTokenTimeout(Endpoints.settings("backup", backupUrl, this.scale, 64),
					firstTokenTimeout)));
		}
		List<String> route = members.stream().map(LlmEndpoint::name).toList();
		EndpointRegistry registry = new EndpointRegistry(members, Map.of("default", route), List.of());
		return BenchmarkAccess.gateway(registry, scaled(Endpoints.DEFAULT_DEADLINE),
				RouteBalancer.priority(registry), hedge);
	}

	private static EndpointSettings withFirstTokenTimeout(EndpointSettings settings, @Nullable Duration firstTokenTimeout) {
		if (firstTokenTimeout == null) {
			return settings;
		}
		EndpointSettings.Timeouts timeouts = settings.timeouts();
		return settings.toBuilder()
			.timeouts(new EndpointSettings.Timeouts(timeouts.timeout(), timeouts.connectTimeout(), firstTokenTimeout,
					timeouts.streamIdleTimeout(), timeouts.upstreamStreaming()))
			.build();
	}

	private static Peer peer(String name, Supplier<Mono<String>> call) {
		return new Blocking(name, () -> call.get().block());
	}

	@Override
	public void close() {
		this.pools.forEach(ConnectionProvider::dispose);
		this.endpoints.close();
	}

	private record Blocking(String name, Supplier<String> answer) implements Peer {

		@Override
		public boolean call() {
			try {
				String answer = this.answer.get();
				return answer != null && !answer.isEmpty();
			}
			catch (RuntimeException ex) {
				return false;
			}
		}

	}

}
