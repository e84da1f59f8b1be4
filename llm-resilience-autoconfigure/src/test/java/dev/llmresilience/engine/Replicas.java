package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.lettuce.core.resource.Delay;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * Replicas of one application, each its own application context with the starter's and Spring
 * Boot's Redis auto-configuration, sharing state on one real Redis. Heartbeats every 100 ms, a
 * replica unheard for 3 s is taken for gone, and Lettuce tries to reconnect every 100 ms, so that
 * the tests run in seconds; commands wait up to 2 s, as the machine that runs them may be busy.
 */
final class Replicas {

	private Replicas() {
	}

	/**
	 * A replica's runner.
	 * @param redis the Redis they share
	 * @param name the replica's name
	 * @param properties further properties, e.g. its endpoints
	 * @return the runner
	 */
	static ApplicationContextRunner replica(RedisServerSupport redis, String name, String... properties) {
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					DataRedisReactiveAutoConfiguration.class, LlmAutoConfiguration.class,
					LlmBreakersEndpointAutoConfiguration.class, LlmHealthContributorAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + redis.port(),
					"llm.shared-state.type=redis", "llm.shared-state.replica-name=" + name,
					"llm.shared-state.heartbeat=100ms", "llm.shared-state.replica-timeout=3s",
					"llm.shared-state.timeout=2s",
					"management.endpoints.web.exposure.include=llmbreakers", "llm.defaults.retry.initial-backoff=1ms",
					"llm.defaults.retry.max-backoff=4ms")
			.withPropertyValues(properties)
			// Lettuce waits up to 30 s between reconnection attempts by default; an application tunes it the same way
			.withBean(ClientResourcesBuilderCustomizer.class,
					() -> (builder) -> builder.reconnectDelay(Delay.constant(Duration.ofMillis(100))));
	}

	/** What a test does with its running replicas. */
	interface Body {

		void accept(List<AssertableApplicationContext> replicas) throws Throwable;

	}

	/**
	 * Run replicas together: each is started once the ones before it are, and all are closed
	 * after the body.
	 * @param runners one per replica
	 * @param body the test
	 */
	static void run(List<ApplicationContextRunner> runners, Body body) {
		run(runners, new ArrayList<>(), body);
	}

	private static void run(List<ApplicationContextRunner> runners, List<AssertableApplicationContext> started,
			Body body) {
		if (started.size() == runners.size()) {
			try {
				body.accept(List.copyOf(started));
			}
			catch (RuntimeException | Error ex) {
				throw ex;
			}
			catch (Throwable ex) {
				throw new IllegalStateException(ex);
			}
			return;
		}
		runners.get(started.size()).run((context) -> {
			if (context.getStartupFailure() != null) {
				throw new IllegalStateException("Replica " + started.size() + " did not start", context.getStartupFailure());
			}
			started.add(context);
			run(runners, started, body);
		});
	}

}
