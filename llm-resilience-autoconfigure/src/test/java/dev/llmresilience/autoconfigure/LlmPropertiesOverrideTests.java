package dev.llmresilience.autoconfigure;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmAutoConfiguration;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.gateway.EndpointSettings;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig.SlidingWindowType;
import io.github.resilience4j.core.functions.Either;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * Tests for the override chain of {@code EndpointSettingsResolver}: an endpoint's own value, else
 * {@code llm.defaults}, else the built-in default; asserted on the resolved settings and on the
 * Resilience4j configurations the endpoints actually run with. Also the routes built from them.
 */
class LlmPropertiesOverrideTests {

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
		.withPropertyValues("llm.endpoints.a.base-url=http://localhost:1/v1", "llm.endpoints.a.model=model-a",
				"llm.endpoints.b.base-url=http://localhost:2/v1", "llm.endpoints.b.model=model-b",
				"llm.endpoints.b.priority=1");

	@Test
	void builtInDefaultsApplyWhenNothingIsSet() {
		this.contextRunner.run((context) -> {
			EndpointSettings settings = endpoint(context, "a").settings();
			assertThat(settings.timeouts().timeout()).isEqualTo(Duration.ofSeconds(60));
			assertThat(settings.timeouts().connectTimeout()).isEqualTo(Duration.ofSeconds(5));
			assertThat(settings.timeouts().firstTokenTimeout()).isEqualTo(Duration.ofSeconds(10));
			assertThat(settings.timeouts().upstreamStreaming()).isTrue();
			assertThat(settings.timeouts().streamIdleTimeout()).isEqualTo(Duration.ofSeconds(30));
			assertThat(settings.limits().maxResponseSize()).isEqualTo(10L * 1024 * 1024);
			assertThat(settings.circuitBreaker()).isEqualTo(new EndpointSettings.CircuitBreakerSettings(20, 20, 50f,
					Duration.ofSeconds(30), 3, Duration.ofSeconds(60), 100f, EndpointSettings.Probe.SYNTHETIC));
			assertThat(settings.retry()).isEqualTo(new EndpointSettings.RetrySettings(3, Duration.ofMillis(500), 2.0,
					Duration.ofSeconds(8), 0.25, Duration.ofSeconds(10)));
			assertThat(settings.bulkhead()).isEqualTo(new EndpointSettings.BulkheadSettings(50, Duration.ZERO));
		});
	}

	@Test
	void settingsBuiltInCodeStartFromTheDefaultsTheConfigurationApplies() {
		this.contextRunner.run((context) -> assertThat(endpoint(context, "a").settings())
			.isEqualTo(EndpointSettings.builder("a", URI.create("http://localhost:1/v1"), "model-a").build()));
	}

	@Test
	void builtInDefaultsReachTheResilience4jConfigs() {
		this.contextRunner.run((context) -> {
			LlmEndpoint endpoint = endpoint(context, "a");
			CircuitBreakerConfig breaker = endpoint.circuitBreaker().getCircuitBreakerConfig();
			assertThat(breaker.getSlidingWindowType()).isEqualTo(SlidingWindowType.COUNT_BASED);
			assertThat(breaker.getSlidingWindowSize()).isEqualTo(20);
			assertThat(breaker.getMinimumNumberOfCalls()).isEqualTo(20);
			assertThat(breaker.getFailureRateThreshold()).isEqualTo(50f);
			assertThat(breaker.getWaitIntervalFunctionInOpenState().apply(1)).isEqualTo(30_000L);
			assertThat(breaker.getPermittedNumberOfCallsInHalfOpenState()).isEqualTo(3);
			assertThat(breaker.getSlowCallDurationThreshold()).isEqualTo(Duration.ofSeconds(60));
			assertThat(breaker.getSlowCallRateThreshold()).isEqualTo(100f);
			BulkheadConfig bulkhead = endpoint.bulkhead().getBulkheadConfig();
			assertThat(bulkhead.getMaxConcurrentCalls()).isEqualTo(50);
			assertThat(bulkhead.getMaxWaitDuration()).isEqualTo(Duration.ZERO);
			assertThat(endpoint.retry().getRetryConfig().getMaxAttempts()).isEqualTo(3);
		});
	}

	@Test
	void builtInBackoffDoublesFromHalfASecondUpToEightSecondsWithAQuarterOfJitter() {
		this.contextRunner.run((context) -> {
			LlmEndpoint endpoint = endpoint(context, "a");
			EndpointSettings.RetrySettings retry = endpoint.settings().retry();
			assertThat(List.of(1, 2, 3, 4, 5, 6)).map(retry::backoffMillis)
				.containsExactly(500L, 1000L, 2000L, 4000L, 8000L, 8000L);
			for (int i = 0; i < 50; i++) {
				long wait = endpoint.retry()
					.getRetryConfig()
					.getIntervalBiFunction()
					.apply(1, Either.left(new IllegalStateException("boom")));
				assertThat(wait).isBetween(375L, 625L);
			}
		});
	}

	@Test
	void defaultsApplyToEveryEndpointThatDoesNotSetThem() {
		this.contextRunner
			.withPropertyValues("llm.defaults.timeout=20s", "llm.defaults.connect-timeout=2s",
					"llm.defaults.first-token-timeout=7s", "llm.defaults.stream-idle-timeout=9s",
					"llm.defaults.circuit-breaker.sliding-window-size=10",
					"llm.defaults.circuit-breaker.minimum-number-of-calls=5",
					"llm.defaults.circuit-breaker.failure-rate-threshold=30",
					"llm.defaults.circuit-breaker.wait-duration-in-open-state=1m",
					"llm.defaults.circuit-breaker.permitted-calls-in-half-open-state=2",
					"llm.defaults.retry.max-attempts=5", "llm.defaults.retry.initial-backoff=100ms",
					"llm.defaults.retry.jitter=0", "llm.defaults.bulkhead.max-concurrent-calls=7",
					"llm.defaults.bulkhead.max-wait=10ms", "llm.defaults.circuit-breaker.probe=requests",
					"llm.defaults.upstream-streaming=false")
			.run((context) -> {
				for (String name : List.of("a", "b")) {
					LlmEndpoint endpoint = endpoint(context, name);
					EndpointSettings settings = endpoint.settings();
					assertThat(settings.timeouts().timeout()).isEqualTo(Duration.ofSeconds(20));
					assertThat(settings.timeouts().connectTimeout()).isEqualTo(Duration.ofSeconds(2));
					assertThat(settings.timeouts().firstTokenTimeout()).isEqualTo(Duration.ofSeconds(7));
					assertThat(settings.timeouts().streamIdleTimeout()).isEqualTo(Duration.ofSeconds(9));
					assertThat(settings.circuitBreaker()).isEqualTo(new EndpointSettings.CircuitBreakerSettings(10, 5,
							30f, Duration.ofMinutes(1), 2, Duration.ofSeconds(60), 100f, EndpointSettings.Probe.REQUESTS));
					assertThat(settings.timeouts().upstreamStreaming()).isFalse();
					assertThat(settings.retry().maxAttempts()).isEqualTo(5);
					assertThat(settings.retry().initialBackoff()).isEqualTo(Duration.ofMillis(100));
					assertThat(settings.retry().jitter()).isZero();
					assertThat(settings.bulkhead()).isEqualTo(new EndpointSettings.BulkheadSettings(7, Duration.ofMillis(10)));
					CircuitBreakerConfig breaker = endpoint.circuitBreaker().getCircuitBreakerConfig();
					assertThat(breaker.getSlidingWindowSize()).isEqualTo(10);
					assertThat(breaker.getMinimumNumberOfCalls()).isEqualTo(5);
					assertThat(breaker.getFailureRateThreshold()).isEqualTo(30f);
					assertThat(breaker.getWaitIntervalFunctionInOpenState().apply(1)).isEqualTo(60_000L);
					assertThat(breaker.getPermittedNumberOfCallsInHalfOpenState()).isEqualTo(2);
					assertThat(endpoint.bulkhead().getBulkheadConfig().getMaxConcurrentCalls()).isEqualTo(7);
					assertThat(endpoint.bulkhead().getBulkheadConfig().getMaxWaitDuration()).isEqualTo(Duration.ofMillis(10));
					assertThat(endpoint.retry().getRetryConfig().getMaxAttempts()).isEqualTo(5);
					assertThat(endpoint.retry().getRetryConfig().getIntervalBiFunction().apply(1,
							Either.left(new IllegalStateException("boom")))).isEqualTo(100L);
				}
			});
	}

	@Test
	void anEndpointsOwnValueWinsOverDefaults() {
		this.contextRunner
			.withPropertyValues("llm.defaults.timeout=20s", "llm.defaults.circuit-breaker.failure-rate-threshold=30",
					"llm.defaults.retry.max-attempts=5", "llm.defaults.bulkhead.max-concurrent-calls=7",
					"llm.endpoints.a.timeout=3s", "llm.endpoints.a.circuit-breaker.failure-rate-threshold=80",
					"llm.endpoints.a.retry.max-attempts=1", "llm.endpoints.a.bulkhead.max-concurrent-calls=2")
			.run((context) -> {
				LlmEndpoint a = endpoint(context, "a");
				assertThat(a.settings().timeouts().timeout()).isEqualTo(Duration.ofSeconds(3));
				assertThat(a.settings().circuitBreaker().failureRateThreshold()).isEqualTo(80f);
				assertThat(a.settings().retry().maxAttempts()).isEqualTo(1);
				assertThat(a.settings().bulkhead().maxConcurrentCalls()).isEqualTo(2);
				assertThat(a.circuitBreaker().getCircuitBreakerConfig().getFailureRateThreshold()).isEqualTo(80f);
				assertThat(a.retry().getRetryConfig().getMaxAttempts()).isEqualTo(1);
				assertThat(a.bulkhead().getBulkheadConfig().getMaxConcurrentCalls()).isEqualTo(2);
				LlmEndpoint b = endpoint(context, "b");
				assertThat(b.settings().timeouts().timeout()).isEqualTo(Duration.ofSeconds(20));
				assertThat(b.circuitBreaker().getCircuitBreakerConfig().getFailureRateThreshold()).isEqualTo(30f);
				assertThat(b.retry().getRetryConfig().getMaxAttempts()).isEqualTo(5);
				assertThat(b.bulkhead().getBulkheadConfig().getMaxConcurrentCalls()).isEqualTo(7);
			});
	}

	@Test
	void anEndpointOverridingOneKeyOfAGroupKeepsTheDefaultsOfTheOthers() {
		this.contextRunner
			.withPropertyValues("llm.defaults.circuit-breaker.sliding-window-size=40",
					"llm.defaults.circuit-breaker.minimum-number-of-calls=10",
					"llm.endpoints.a.circuit-breaker.minimum-number-of-calls=30")
			.run((context) -> {
				CircuitBreakerConfig breaker = endpoint(context, "a").circuitBreaker().getCircuitBreakerConfig();
				assertThat(breaker.getSlidingWindowSize()).isEqualTo(40);
				assertThat(breaker.getMinimumNumberOfCalls()).isEqualTo(30);
				assertThat(breaker.getFailureRateThreshold()).isEqualTo(50f);
			});
	}

	@Test
	void aSmallerWindowLowersTheBuiltInMinimumNumberOfCallsWithIt() {
		this.contextRunner.withPropertyValues("llm.endpoints.a.circuit-breaker.sliding-window-size=10")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				CircuitBreakerConfig breaker = endpoint(context, "a").circuitBreaker().getCircuitBreakerConfig();
				assertThat(breaker.getSlidingWindowSize()).isEqualTo(10);
				assertThat(breaker.getMinimumNumberOfCalls()).isEqualTo(10);
				assertThat(endpoint(context, "a").settings().circuitBreaker().minimumNumberOfCalls()).isEqualTo(10);
				assertThat(endpoint(context, "b").circuitBreaker().getCircuitBreakerConfig().getMinimumNumberOfCalls())
					.isEqualTo(20);
			});
	}

	@Test
	void endpointIdentityIsResolvedAsConfigured() {
		this.contextRunner
			.withPropertyValues("llm.endpoints.a.base-url=https://api.example.com/v1/", "llm.endpoints.a.region=eu",
					"llm.endpoints.a.api-key=sk-resolved-key", "llm.endpoints.a.headers.OpenAI-Organization=org-1",
					"llm.endpoints.a.price.input-per-million=2.5", "llm.endpoints.a.price.output-per-million=10")
			.run((context) -> {
				EndpointSettings settings = endpoint(context, "a").settings();
				assertThat(settings.upstream().baseUrl()).isEqualTo(URI.create("https://api.example.com/v1"));
				assertThat(settings.upstream().model()).isEqualTo("model-a");
				assertThat(settings.upstream().protocol()).isEqualTo("openai");
				assertThat(settings.routing().region()).isEqualTo("eu");
				assertThat(settings.routing().priority()).isZero();
				assertThat(settings.routing().enabled()).isTrue();
				assertThat(settings.upstream().apiKey().reveal()).isEqualTo("sk-resolved-key");
				assertThat(settings.upstream().headers()).containsExactly(Map.entry("OpenAI-Organization", "org-1"));
				assertThat(settings.routing().price()).isEqualTo(new EndpointSettings.Price(2.5, 10.0));
				assertThat(settings.toString()).doesNotContain("sk-resolved-key").doesNotContain("org-1");
				assertThat(endpoint(context, "b").settings().routing().price()).isNull();
				assertThat(endpoint(context, "b").settings().upstream().apiKey().isPresent()).isFalse();
			});
	}

	@Test
	void endpointNamedWithADotBindsInBrackets() {
		this.contextRunner
			.withPropertyValues("llm.endpoints[gpt-4.1].base-url=https://api.openai.com/v1",
					"llm.endpoints[gpt-4.1].model=gpt-4.1", "llm.endpoints[gpt-4.1].priority=-1",
					"llm.endpoints[gpt-4.1].retry.max-attempts=2")
			.run((context) -> {
				LlmEndpoint endpoint = endpoint(context, "gpt-4.1");
				assertThat(endpoint.settings().upstream().model()).isEqualTo("gpt-4.1");
				assertThat(endpoint.retry().getRetryConfig().getMaxAttempts()).isEqualTo(2);
				assertThat(context.getBean(EndpointRegistry.class).routeNames())
					.containsExactly(Map.entry("default", List.of("gpt-4.1", "a", "b")));
			});
	}

	@Test
	void defaultRouteHoldsTheEnabledEndpointsByPriorityThenName() {
		this.contextRunner
			.withPropertyValues("llm.endpoints.c.base-url=http://localhost:3/v1", "llm.endpoints.c.model=model-c",
					"llm.endpoints.c.priority=-1", "llm.endpoints.aa.base-url=http://localhost:4/v1",
					"llm.endpoints.aa.model=model-aa")
			.run((context) -> {
				EndpointRegistry registry = context.getBean(EndpointRegistry.class);
				assertThat(registry.routeNames()).containsExactly(Map.entry("default", List.of("c", "a", "aa", "b")));
				assertThat(registry.endpoints()).extracting(LlmEndpoint::name).containsExactly("c", "a", "aa", "b");
			});
	}

	@Test
	void disabledEndpointsAreLeftOutOfTheDefaultRoute() {
		this.contextRunner.withPropertyValues("llm.endpoints.a.enabled=false").run((context) -> {
			EndpointRegistry registry = context.getBean(EndpointRegistry.class);
			assertThat(registry.routeNames()).containsExactly(Map.entry("default", List.of("b")));
			assertThat(registry.endpoint("a")).isNotNull();
			assertThat(registry.endpoint("a").settings().routing().enabled()).isFalse();
		});
	}

	@Test
	void explicitRoutesKeepTheirOrderAndTheDefaultRouteIsStillAdded() {
		this.contextRunner.withPropertyValues("llm.routes.cheap[0]=b", "llm.routes.cheap[1]=a", "llm.routes.only-a=a")
			.run((context) -> {
				EndpointRegistry registry = context.getBean(EndpointRegistry.class);
				assertThat(registry.routeNames()).containsOnly(Map.entry("default", List.of("a", "b")),
						Map.entry("cheap", List.of("b", "a")), Map.entry("only-a", List.of("a")));
				assertThat(registry.route("cheap")).extracting(LlmEndpoint::name).containsExactly("b", "a");
			});
	}

	@Test
	void anExplicitDefaultRouteReplacesTheComputedOne() {
		this.contextRunner.withPropertyValues("llm.routes.default=b").run((context) -> {
			assertThat(context.getBean(EndpointRegistry.class).routeNames())
				.containsExactly(Map.entry("default", List.of("b")));
		});
	}

	@Test
	void disabledEndpointsAreSkippedInExplicitRoutes() {
		this.contextRunner.withPropertyValues("llm.endpoints.a.enabled=false", "llm.routes.both=a,b")
			.run((context) -> {
				assertThat(context.getBean(EndpointRegistry.class).routeNames()).containsEntry("both", List.of("b"));
			});
	}

	private static LlmEndpoint endpoint(AssertableApplicationContext context, String name) {
		assertThat(context).hasNotFailed();
		LlmEndpoint endpoint = context.getBean(EndpointRegistry.class).endpoint(name);
		assertThat(endpoint).as("endpoint '%s'", name).isNotNull();
		return endpoint;
	}

}
