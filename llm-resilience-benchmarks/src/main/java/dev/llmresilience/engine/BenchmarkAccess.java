package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiFunction;
import java.util.function.Function;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.spi.BalanceSource;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The engine's parts the benchmarks build by hand, without an application context. Lives in the
 * engine's package (in the benchmarks' jar, on the class path beside the starter's), because those
 * parts are package-private: the starter itself shows them to no one.
 */
public final class BenchmarkAccess {

	private BenchmarkAccess() {
	}

	/**
	 * Makes endpoints as the auto-configuration does, with Resilience4j's default registries.
	 * @param classifier the failure classifier
	 * @return makes an endpoint from its settings and its client
	 */
	public static BiFunction<EndpointSettings, LlmClient, LlmEndpoint> endpoints(FailureClassifier classifier) {
		EndpointFactory factory = new EndpointFactory(CircuitBreakerRegistry.ofDefaults(), RetryRegistry.ofDefaults(),
				BulkheadRegistry.ofDefaults(), classifier, Clock.systemUTC(),
				() -> ThreadLocalRandom.current().nextDouble());
		return factory::create;
	}

	/**
	 * A gateway with no cache, no deferral, no guard, no listener and no observation.
	 * @param registry the endpoints and routes
	 * @param deadline {@code llm.gateway.deadline}
	 * @return the gateway
	 */
	public static LlmGateway gateway(EndpointRegistry registry, Duration deadline) {
		return new DefaultLlmGateway(registry, GatewaySettings.of(deadline));
	}

	/**
	 * A gateway as {@link #gateway(EndpointRegistry, Duration)}, with a balancer and, optionally,
	 * hedging on the {@code default} route.
	 * @param registry the endpoints and routes
	 * @param deadline {@code llm.gateway.deadline}
	 * @param balancer orders each call's endpoints
	 * @param hedge how to hedge, or {@code null} for no hedging
	 * @return the gateway
	 */
	public static LlmGateway gateway(EndpointRegistry registry, Duration deadline, RouteBalancer balancer,
			@Nullable Hedge hedge) {
		Hedging hedging = (hedge != null) ? new Hedging(new HedgeSettings(true, hedge.adaptive(), hedge.percentile(),
				hedge.delay(), hedge.minDelay(), hedge.maxRatio(), hedge.window(), hedge.byPromptSize()), Map.of(),
				List.of("default"))
				: Hedging.off();
		return new DefaultLlmGateway(registry, GatewaySettings.of(deadline), Degradation.none(), List.of(),
				ObservationRegistry.NOOP, balancer, hedging);
	}

	/**
	 * A balancer, each route's order kept ({@code llm.routes.<name>.order=priority}).
	 * @param registry the endpoints and routes
	 * @param balance each balanced route's {@code balance} ({@code weighted}, {@code least-latency})
	 * @param weights each endpoint's weight
	 * @param source the random numbers and the clock
	 * @return the balancer
	 */
	public static RouteBalancer balancer(EndpointRegistry registry, Map<String, String> balance,
			Map<String, Double> weights, BalanceSource source) {
		Map<String, RouteStrategy> strategies = new LinkedHashMap<>();
		balance.forEach((route, name) -> strategies.put(route,
				new RouteStrategy(Balance.valueOf(name.toUpperCase(Locale.ROOT).replace('-', '_')), RouteOrder.PRIORITY)));
		return new RouteBalancer(registry, strategies, weights, source);
	}

	/**
	 * One endpoint's chain only (retry, breaker, bulkhead, watchdog), no route walk.
	 * @param endpoint the endpoint
	 * @param request the request
	 * @return the completion
	 */
	public static Mono<Completion> chat(LlmEndpoint endpoint, ChatRequest request) {
		return endpoint.chat(request, CallContext.of((attempt) -> {
		}));
	}

	/**
	 * Hedging's settings ({@code llm.gateway.hedge.*}), on.
	 * @param adaptive whether the delay follows the route's latency
	 * @param percentile the latency percentile that sets the delay
	 * @param delay the delay when not adaptive, and the most it may be
	 * @param minDelay the least it may be
	 * @param maxRatio the most hedges per call over the window
	 * @param window the window the ratio is counted over
	 * @param byPromptSize whether an adaptive delay is learned per prompt size too
	 */
	/**
	 * An endpoint whose client tells its capacity what the provider's headers announce, as the
	 * auto-configuration makes it.
	 * @param settings its settings
	 * @param classifier the failure rules
	 * @param clients makes its client from the client settings given
	 * @return the endpoint
	 */
	public static LlmEndpoint learning(EndpointSettings settings, FailureClassifier classifier,
			Function<ClientSettings, LlmClient> clients) {
		EndpointCapacity capacity = new EndpointCapacity(settings, Clock.systemUTC());
		EndpointFactory factory = new EndpointFactory(CircuitBreakerRegistry.ofDefaults(), RetryRegistry.ofDefaults(),
				BulkheadRegistry.ofDefaults(), classifier, Clock.systemUTC(),
				() -> ThreadLocalRandom.current().nextDouble());
		return factory.create(settings, clients.apply(settings.client().withRateLimits(capacity)), capacity);
	}

	/**
	 * How many times the endpoint's hang evidence opened its breaker since it was made.
	 * @param endpoint the endpoint
	 * @return the count
	 */
	public static long hangOpenings(LlmEndpoint endpoint) {
		return endpoint.hang().describe().openings();
	}

	public record Hedge(boolean adaptive, double percentile, Duration delay, Duration minDelay, double maxRatio,
			Duration window, boolean byPromptSize) {
	}

	/**
	 * Deferred requests an application holds now (pending or not yet stored), for the soak.
	 * @param context the application
	 * @return how many, or -1 without deferral
	 */
	public static int deferredPending(org.springframework.context.ApplicationContext context) {
		DeferredQueue queue = context.getBeanProvider(DeferredQueue.class).getIfAvailable();
		return (queue != null) ? queue.pending() : -1;
	}

	/**
	 * The attempts' timers neither run nor disposed on Reactor's parallel scheduler: they wait in the
	 * engine's own queue, not in the scheduler's executors.
	 * @return how many
	 */
	public static int attemptTimersPending() {
		return AttemptTimers.pendingOn(Schedulers.parallel());
	}

}
