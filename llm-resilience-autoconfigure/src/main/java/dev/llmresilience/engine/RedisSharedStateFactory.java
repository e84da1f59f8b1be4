package dev.llmresilience.engine;

import java.security.SecureRandom;
import java.time.Clock;
import java.util.Locale;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.SharedStateProperties;
import dev.llmresilience.redis.RedisSharedState;
import dev.llmresilience.redis.RedisSharedState.RedisSettings;
import dev.llmresilience.spi.SharedState;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;

/**
 * Makes the Redis shared state. Loaded only once {@link SharedStateConfiguration} has checked that
 * Spring Data Redis is on the classpath.
 */
final class RedisSharedStateFactory {

	private static final SecureRandom random = new SecureRandom();

	private RedisSharedStateFactory() {
	}

	static SharedState create(SharedStateProperties properties, String keyPrefix, BeanFactory beans, String beanName,
			Clock clock) {
		ReactiveRedisConnectionFactory factory = beans.getBeanProvider(ReactiveRedisConnectionFactory.class).getIfUnique();
		if (factory == null) {
			throw new LlmConfigurationException("llm.shared-state.type",
					"is redis, but the application has no ReactiveRedisConnectionFactory bean",
					"Let Spring Boot configure Redis (spring.data.redis.host, port, ...; keep its DataRedisAutoConfiguration), "
							+ "or declare a ReactiveRedisConnectionFactory bean");
		}
		if (beans instanceof ConfigurableListableBeanFactory configurable) {
			// closed before the connection it uses: it says goodbye to the fleet on it
			for (String factoryName : configurable.getBeanNamesForType(ReactiveRedisConnectionFactory.class)) {
				configurable.registerDependentBean(factoryName, beanName);
			}
		}
		String name = (properties.getReplicaName() != null) ? properties.getReplicaName() : defaultName();
		return RedisSharedState.connect(factory, new RedisSettings(keyPrefix, name, properties.getTimeout(),
				properties.getHeartbeat(), properties.getReplicaTimeout()), clock);
	}

	/** The host's name as the environment gives it (a pod's name on Kubernetes; no DNS look-up), and a random suffix. */
	private static String defaultName() {
		String host = System.getenv("HOSTNAME");
		host = (host == null || host.isBlank()) ? "replica" : host.replaceAll("[^A-Za-z0-9._-]", "-");
		String suffix = Long.toString(random.nextLong() & Long.MAX_VALUE, 36);
		return (host + "-" + suffix.substring(0, Math.min(6, suffix.length()))).toLowerCase(Locale.ROOT);
	}

}
