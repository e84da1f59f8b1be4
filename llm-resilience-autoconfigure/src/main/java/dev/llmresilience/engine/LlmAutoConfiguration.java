package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

import dev.llmresilience.autoconfigure.GatewayProperties;
import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.autoconfigure.SharedStateProperties;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.gateway.LlmGatewayListener;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.protocol.LlmClientFactory;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.anthropic.AnthropicClientFactory;
import dev.llmresilience.protocol.openai.AzureOpenAiClientFactory;
import dev.llmresilience.protocol.openai.OpenAiClientFactory;
import dev.llmresilience.spi.BalanceSource;
import dev.llmresilience.spi.FallbackCache;
import dev.llmresilience.spi.RouteSelector;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import io.micrometer.observation.ObservationRegistry;
import reactor.netty.http.client.HttpClient;

import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.Lazy;
import org.springframework.core.env.Environment;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Auto-configuration of the {@link LlmGateway}: one endpoint per {@code llm.endpoints} entry, each
 * with its own circuit breaker, retry and bulkhead, and its HTTP client built from the application's
 * {@link WebClient.Builder}. The protocols {@code openai}, {@code anthropic} and {@code azure-openai}
 * are built in; an {@link LlmClientFactory} bean adds another, or replaces one of the same name.
 */
@AutoConfiguration(afterName = { "org.springframework.boot.webclient.autoconfigure.WebClientAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration" })
@ConditionalOnClass({ WebClient.class, HttpClient.class, CircuitBreaker.class })
@ConditionalOnBooleanProperty(name = "llm.enabled", matchIfMissing = true)
@EnableConfigurationProperties({ LlmProperties.class, SharedStateProperties.class })
@Import({ SharedStateConfiguration.class, DegradationConfiguration.class, WatchConfiguration.class,
		HedgingConfiguration.class })
public final class LlmAutoConfiguration {

	private static final String CEILING = "Use the longest duration a caller may ask for in a ChatRequest, such as 10m.";

	@Bean
	@ConditionalOnMissingBean
	FailureClassifier llmFailureClassifier() {
		return new FailureClassifier();
	}

	/**
	 * What an upstream response or transport error stands for, for every built-in protocol, and every
	 * key the application configures, redacted from every endpoint's provider text; an application's
	 * own bean of it only sets the clock an HTTP-date {@code Retry-After} is read with.
	 */
	@Bean
	@ConditionalOnMissingBean
	UpstreamFailures llmUpstreamFailures(LlmProperties properties, Environment environment) {
		return new UpstreamFailures(Clock.systemUTC(), ConfiguredSecrets.of(properties, environment));
	}

	/**
	 * The application's Resilience4j registries when it has all three (Resilience4j's Spring Boot
	 * integration), so that our breakers also show in its actuator endpoints and metrics and its
	 * {@code instances.<endpoint>} blocks can tune them; else registries of our own.
	 */
	@Bean
	@ConditionalOnMissingBean
	ResilienceRegistries llmResilienceRegistries(ObjectProvider<CircuitBreakerRegistry> circuitBreakers,
			ObjectProvider<RetryRegistry> retries, ObjectProvider<BulkheadRegistry> bulkheads) {
		CircuitBreakerRegistry circuitBreakerRegistry = circuitBreakers.getIfUnique();
		RetryRegistry retryRegistry = retries.getIfUnique();
		BulkheadRegistry bulkheadRegistry = bulkheads.getIfUnique();
		if (circuitBreakerRegistry != null && retryRegistry != null && bulkheadRegistry != null) {
			return new ResilienceRegistries(circuitBreakerRegistry, retryRegistry, bulkheadRegistry, true);
		}
		return ResilienceRegistries.own();
	}

	/**
	 * {@code llm.routes} in both forms, bound and checked once for the registry (the routes'
	 * endpoints) and the balancer (their strategies), so that each check and warning runs once.
	 * Lazy: the registry binds it only after its unknown-key check, so that a misspelt route key is
	 * named with the nearest valid key rather than refused as no key of a route.
	 */
	@Bean
	@Lazy
	RouteResolver llmRouteResolver(LlmProperties properties, Environment environment) {
		return new RouteResolver(properties, RouteForms.of(properties, environment),
				(property) -> UnknownKeys.origin(environment, property));
	}

	@Bean
	@ConditionalOnMissingBean
	EndpointRegistry llmEndpointRegistry(LlmProperties properties, FailureClassifier classifier,
			UpstreamFailures failures, ResilienceRegistries registries, ObjectProvider<WebClient.Builder> webClientBuilder,
			ObjectProvider<LlmClientFactory> clientFactories, ObjectProvider<CallVolumeGuard> guard,
			ObjectProvider<RouteResolver> routeResolver, Environment environment, ListableBeanFactory beans) {
		UnknownKeys.check(environment, beans);
		Map<String, LlmClientFactory> protocols = new LinkedHashMap<>();
		Supplier<WebClient.Builder> builders = () -> webClientBuilder.getIfAvailable(WebClient::builder).clone();
		for (LlmClientFactory builtIn : List.of(new OpenAiClientFactory(failures, builders),
				OpenAiClientFactory.responses(failures, builders), new AnthropicClientFactory(failures, builders),
				new AzureOpenAiClientFactory(failures, builders))) {
			protocols.put(builtIn.protocol(), builtIn);
		}
		clientFactories.orderedStream().forEach((factory) -> protocols.put(factory.protocol(), factory));
		EndpointSettingsResolver resolver = new EndpointSettingsResolver(properties, protocols);
		List<EndpointSettings> settings = resolver.endpoints();
		EndpointFactory endpointFactory = new EndpointFactory(registries.circuitBreakers(), registries.retries(),
				registries.bulkheads(), classifier, Clock.systemUTC(), () -> ThreadLocalRandom.current().nextDouble(),
				guard.getIfAvailable(CallVolumeGuard::off))
			.withBatchShare(batchShare(properties.getGateway().getBatchShare()));
		List<LlmEndpoint> endpoints = new ArrayList<>();
		List<AutoCloseable> resources = new ArrayList<>();
		for (EndpointSettings endpoint : settings) {
			// the client tells the endpoint's capacity what the provider's headers announce
			EndpointCapacity capacity = new EndpointCapacity(endpoint, Clock.systemUTC());
			LlmClient client = protocols.get(endpoint.upstream().protocol())
				.create(endpoint.client().withRateLimits(capacity));
			if (client instanceof AutoCloseable closeable) {
				resources.add(closeable);
			}
			endpoints.add(endpointFactory.create(endpoint, client, capacity));
		}
		RouteResolver configuredRoutes = routeResolver.getObject();
		Map<String, List<String>> routes = configuredRoutes.routes(settings);
		StartupSummary.log(settings, routes, properties, !configuredRoutes.configures(EndpointRegistry.DEFAULT_ROUTE));
		return new EndpointRegistry(endpoints, routes, resources);
	}

	@Bean
	ProbesShutdown llmProbesShutdown(EndpointRegistry endpoints) {
		return new ProbesShutdown(endpoints);
	}

	private static double batchShare(double share) {
		LlmConfigurationException.check(share > 0 && share <= 1, "llm.gateway.batch-share", share,
				"but must be over 0 and at most 1",
				"It is a fraction of each endpoint's capacity: 0.5 lets batch calls use half, 1 lets them use all of it.");
		return share;
	}

	@Bean
	@ConditionalOnMissingBean
	BalanceSource llmBalanceSource() {
		return BalanceSource.system();
	}

	/**
	 * Each route's {@code balance} and {@code order}, and the endpoints' weights, over the routes
	 * the registry holds.
	 */
	@Bean
	@ConditionalOnMissingBean
	RouteBalancer llmRouteBalancer(EndpointRegistry endpoints, RouteResolver routes, BalanceSource source) {
		Map<String, EndpointSettings> settings = new LinkedHashMap<>();
		endpoints.endpoints().forEach((endpoint) -> settings.put(endpoint.name(), endpoint.settings()));
		return new RouteBalancer(endpoints, routes.strategies(settings, endpoints.routeNames()), routes.weights(), source);
	}

	@Bean
	@ConditionalOnMissingBean
	LlmGateway llmGateway(EndpointRegistry endpoints, LlmProperties properties, RouteSelector routeSelector,
			RouteBalancer balancer, CallVolumeGuard guard, BudgetGuard budget, ConcurrencyLimit limit,
			ObjectProvider<FallbackCache> cache,
			ObjectProvider<DeferredQueue> deferred, ObjectProvider<LlmGatewayListener> listeners,
			ObjectProvider<ObservationRegistry> observations, ObjectProvider<Hedging> hedging) {
		GatewayProperties gateway = properties.getGateway();
		Duration deadline = LlmConfigurationException.positive("llm.gateway.deadline", gateway.getDeadline(),
				"Use a duration longer than an endpoint's timeout, such as 90s.");
		GatewaySettings settings = new GatewaySettings(deadline, gateway.getBusyMessage(),
				gateway.getContentFilteredMessage(), gateway.isBusyAsError(), gateway.getDeferral().getMessage(),
				gateway.getStream().isResumeOnFallback(),
				LlmConfigurationException.positive("llm.gateway.max-request-timeout", gateway.getMaxRequestTimeout(), CEILING),
				LlmConfigurationException.positive("llm.gateway.max-request-deadline", gateway.getMaxRequestDeadline(), CEILING));
		Degradation degradation = new Degradation(routeSelector, cache.getIfAvailable(), deferred.getIfAvailable(),
				guard, budget, Clock.systemUTC(), limit);
		return new DefaultLlmGateway(endpoints, settings, degradation, listeners.orderedStream().toList(),
				observations.getIfUnique(() -> ObservationRegistry.NOOP), balancer, hedging.getIfAvailable(Hedging::off));
	}

}
