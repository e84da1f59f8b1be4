package dev.llmresilience.engine;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.redis.RedisSharedState;
import dev.llmresilience.spi.BreakerControl;
import dev.llmresilience.spi.DeferredStore;
import dev.llmresilience.spi.SharedState;
import mockwebserver3.MockWebServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.util.ClassUtils;

import static dev.llmresilience.support.Answers.completion;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code llm.shared-state.*}: local by default, whatever is on the classpath; bad values fail at
 * start-up naming the property and the fix; Redis that is down at start-up does not stop the
 * application.
 */
class SharedStateConfigurationTests {

	private final MockWebServer provider = new MockWebServer();

	private ApplicationContextRunner runner;

	@BeforeEach
	void start() throws Exception {
		this.provider.start();
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					DataRedisReactiveAutoConfiguration.class, LlmAutoConfiguration.class,
					LlmHealthContributorAutoConfiguration.class))
			.withPropertyValues("llm.endpoints.main.base-url=" + this.provider.url("/v1"), "llm.endpoints.main.model=m");
	}

	@AfterEach
	void stop() {
		this.provider.close();
	}

	@Test
	void stateIsLocalByDefaultEvenWithRedisOnTheClasspath() {
		this.runner.run((context) -> {
			assertThat(context.getBean(SharedState.class)).isSameAs(SharedState.LOCAL);
			assertThat(context.getBean(BreakerControl.class)).isSameAs(BreakerControl.LOCAL);
			assertThat(context.getBean(DeferredStore.class)).isInstanceOf(InMemoryDeferredStore.class);
			Health health = context.getBean(LlmHealthIndicator.class).health(true);
			assertThat(health.getDetails().get("sharedState")).isEqualTo(Map.of("type", "local", "available", true));
		});
	}

	@Test
	void redisWithoutSpringDataRedisOnTheClasspathIsRejected() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(ReactiveRedisConnectionFactory.class))
			.withPropertyValues("llm.endpoints.main.base-url=" + this.provider.url("/v1"), "llm.endpoints.main.model=m",
					"llm.shared-state.type=redis")
			.run((context) -> assertRejected(context.getStartupFailure(), "llm.shared-state.type",
					"is redis, but Spring Data Redis with Lettuce is not on the classpath",
					"Add org.springframework.boot:spring-boot-starter-data-redis-reactive to the application's dependencies, "
							+ "or set llm.shared-state.type=local"));
	}

	@Test
	void redisWithoutAConnectionFactoryIsRejected() {
		new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
			.withPropertyValues("llm.endpoints.main.base-url=" + this.provider.url("/v1"), "llm.endpoints.main.model=m",
					"llm.shared-state.type=redis")
			.run((context) -> assertRejected(context.getStartupFailure(), "llm.shared-state.type",
					"is redis, but the application has no ReactiveRedisConnectionFactory bean",
					"Let Spring Boot configure Redis (spring.data.redis.host, port, ...; keep its DataRedisAutoConfiguration)"));
	}

	@Test
	void badKeyPrefixesAreRejected() {
		for (String prefix : new String[] { "", "my app:", "llm*:", "{llm:", "{}:", "{a}{b}:", "x".repeat(65) }) {
			this.runner.withPropertyValues("llm.shared-state.type=redis", "llm.shared-state.key-prefix=" + prefix)
				.run((context) -> assertRejected(context.getStartupFailure(), "llm.shared-state.key-prefix",
						"is '" + prefix + "', which is not a usable Redis key prefix",
						"Use 1 to 64 letters, digits and ':', '_', '.', '-', with at most one {hash-tag} (for Redis Cluster), "
								+ "e.g. llm: or {llm}:myapp:"));
		}
	}

	@Test
	void theDefaultKeyPrefixIsTheApplicationsOwn() throws Exception {
		assertThat(SharedStateConfiguration.defaultKeyPrefix(null)).isEqualTo("llm:application:");
		assertThat(SharedStateConfiguration.defaultKeyPrefix(" ")).isEqualTo("llm:application:");
		assertThat(SharedStateConfiguration.defaultKeyPrefix("orders")).isEqualTo("llm:orders:");
		assertThat(SharedStateConfiguration.defaultKeyPrefix("my app {eu}")).isEqualTo("llm:my-app--eu-:");
		assertThat(SharedStateConfiguration.defaultKeyPrefix("x".repeat(100))).hasSize(64);
		ApplicationContextRunner redis = this.runner.withPropertyValues("llm.shared-state.type=redis",
				"spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + closedPort(),
				"spring.application.name=orders");
		redis.run((context) -> assertThat(((RedisSharedState) context.getBean(SharedState.class)).key("deferred"))
			.isEqualTo("llm:orders:deferred"));
		redis.withPropertyValues("llm.shared-state.key-prefix=llm:shared:")
			.run((context) -> assertThat(((RedisSharedState) context.getBean(SharedState.class)).key("deferred"))
				.isEqualTo("llm:shared:deferred"));
	}

	@Test
	void aReplicaTimeoutShorterThanTwoHeartbeatsIsRejected() {
		this.runner
			.withPropertyValues("llm.shared-state.type=redis", "llm.shared-state.heartbeat=2s",
					"llm.shared-state.replica-timeout=3s")
			.run((context) -> assertRejected(context.getStartupFailure(), "llm.shared-state.replica-timeout",
					"is PT3S, less than twice llm.shared-state.heartbeat (PT2S)", "Make it at least two heartbeats"));
	}

	@Test
	void aZeroTimeoutIsRejected() {
		this.runner.withPropertyValues("llm.shared-state.type=redis", "llm.shared-state.timeout=0ms")
			.run((context) -> assertRejected(context.getStartupFailure(), "llm.shared-state.timeout",
					"is PT0S, but must be positive", "Use a positive duration such as 250ms or 1s."));
	}

	@Test
	void anUnknownTypeIsRejectedNamingTheProperty() {
		this.runner.withPropertyValues("llm.shared-state.type=memcached").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(stackTrace(context.getStartupFailure())).contains("llm.shared-state.type").contains("memcached");
		});
	}

	@Test
	void redisDownAtStartUpLeavesTheApplicationUpWithLocalState() throws Exception {
		this.provider.enqueue(completion("answered without redis"));
		this.runner.withPropertyValues("llm.shared-state.type=redis", "spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + closedPort(), "llm.shared-state.heartbeat=100ms",
				"llm.shared-state.replica-timeout=1s", "llm.gateway.guard.max-calls-per-hour=10")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(SharedState.class)).isInstanceOf(RedisSharedState.class);
				assertThat(context.getBean(DeferredStore.class).getClass().getSimpleName()).isEqualTo("RedisDeferredStore");
				assertThat(context.getBean(dev.llmresilience.gateway.LlmGateway.class)
					.chat(ChatRequest.ofUser("hello"))
					.block(Duration.ofSeconds(10))
					.tier()).isEqualTo(Tier.PRIMARY);
				Health health = context.getBean(LlmHealthIndicator.class).health(true);
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				@SuppressWarnings("unchecked")
				Map<String, Object> shared = (Map<String, Object>) health.getDetails().get("sharedState");
				assertThat(shared).containsEntry("type", "redis").containsEntry("available", false).containsKey("problem");
			});
	}

	private static void assertRejected(Throwable failure, String property, String problem, String action) {
		assertThat(failure).isNotNull();
		assertThat(failure).rootCause().isInstanceOf(LlmConfigurationException.class);
		Throwable cause = failure;
		while (cause.getCause() != null) {
			cause = cause.getCause();
		}
		LlmConfigurationException exception = (LlmConfigurationException) cause;
		assertThat(exception.getProperty()).isEqualTo(property);
		assertThat(exception.getProblem()).isEqualTo(problem);
		assertThat(exception.getAction()).contains(action);
		FailureAnalysis analysis = analyzer().analyze(failure);
		assertThat(analysis.getDescription())
			.isEqualTo("Invalid llm-resilience configuration: property '" + property + "' " + problem + ".");
		assertThat(analysis.getAction()).contains(action);
	}

	// package-private, as spring.factories names it: built the way Boot builds it
	private static FailureAnalyzer analyzer() {
		Class<?> type = ClassUtils.resolveClassName("dev.llmresilience.autoconfigure.LlmConfigurationFailureAnalyzer", null);
		return (FailureAnalyzer) BeanUtils.instantiateClass(type);
	}

	private static String stackTrace(Throwable failure) {
		java.io.StringWriter out = new java.io.StringWriter();
		failure.printStackTrace(new java.io.PrintWriter(out));
		return out.toString();
	}

	private static int closedPort() throws Exception {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

}
