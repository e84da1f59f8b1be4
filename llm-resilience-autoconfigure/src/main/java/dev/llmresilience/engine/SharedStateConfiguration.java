package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.SharedStateProperties;
import dev.llmresilience.spi.BreakerControl;
import dev.llmresilience.spi.SharedState;
import dev.llmresilience.spi.SharedState.CapacityShare;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * What the replicas share ({@code llm.shared-state.type}): nothing by default; with {@code redis},
 * the breakers, the guard, the budget and the deferred queue, on the application's Spring Data
 * Redis connection. Imported by {@link LlmAutoConfiguration} before {@link DegradationConfiguration},
 * which asks it for the shared counterparts. No Redis type appears here, so that the starter runs
 * without Spring Data Redis on the classpath.
 */
@Configuration(proxyBeanMethods = false)
class SharedStateConfiguration {

	private static final String REDIS_CLASS = "org.springframework.data.redis.connection.ReactiveRedisConnectionFactory";

	private static final String LETTUCE_CLASS = "io.lettuce.core.RedisClient";

	@Bean
	@ConditionalOnMissingBean
	SharedState llmSharedState(SharedStateProperties properties, BeanFactory beanFactory, Environment environment) {
		if (properties.getType() != SharedStateProperties.Type.REDIS) {
			return SharedState.LOCAL;
		}
		ClassLoader classLoader = (beanFactory instanceof ConfigurableBeanFactory configurable
				&& configurable.getBeanClassLoader() != null) ? configurable.getBeanClassLoader()
						: SharedStateConfiguration.class.getClassLoader();
		if (!ClassUtils.isPresent(REDIS_CLASS, classLoader) || !ClassUtils.isPresent(LETTUCE_CLASS, classLoader)) {
			throw new LlmConfigurationException("llm.shared-state.type",
					"is redis, but Spring Data Redis with Lettuce is not on the classpath",
					"Add org.springframework.boot:spring-boot-starter-data-redis-reactive to the application's dependencies, "
							+ "or set llm.shared-state.type=local");
		}
		String prefix = (properties.getKeyPrefix() != null) ? properties.getKeyPrefix()
				: defaultKeyPrefix(environment.getProperty("spring.application.name"));
		validate(prefix, properties);
		return RedisSharedStateFactory.create(properties, prefix, beanFactory, "llmSharedState", Clock.systemUTC());
	}

	/**
	 * The application's own prefix, so that two applications on one Redis share nothing unless told
	 * to: {@code llm:<name>:}, the name's other characters than letters, digits and {@code :_.-}
	 * replaced (a brace would make a Redis Cluster hash tag, a blank no key at all).
	 */
	static String defaultKeyPrefix(@Nullable String applicationName) {
		String name = (applicationName == null || applicationName.isBlank()) ? "application"
				: applicationName.strip().replaceAll("[^A-Za-z0-9:_.\\-]", "-");
		return "llm:" + name.substring(0, Math.min(name.length(), 59)) + ":";
	}

	@Bean
	@ConditionalOnMissingBean
	BreakerControl llmBreakerControl(SharedState sharedState, EndpointRegistry endpoints) {
		BreakerControl control = sharedState.breakers(endpoints.circuitBreakers());
		// an opening on a hang's evidence is decided here, not by the fleet's window: the fleet is told of it
		for (LlmEndpoint endpoint : endpoints.endpoints()) {
			endpoint.hang().shareOpenings(control);
		}
		return control;
	}

	/**
	 * What the endpoints learn of their providers' rate limits, shared with the fleet when the
	 * state is (a provider's limit is its key's, not a replica's), and the retry budgets' floor,
	 * shared among the replicas alive.
	 */
	@Bean
	@ConditionalOnMissingBean
	CapacityShare llmCapacityShare(SharedState sharedState, EndpointRegistry endpoints) {
		CapacityShare share = sharedState.capacity();
		for (LlmEndpoint endpoint : endpoints.endpoints()) {
			endpoint.capacity().share(endpoint.name(), share);
			// a retry budget's floor is the fleet's, shared among the replicas alive
			endpoint.retryBudget().fleet(() -> sharedState.status().replicas());
		}
		return share;
	}

	private static void validate(String prefix, SharedStateProperties properties) {
		if ( !prefix.matches("[A-Za-z0-9:_.\\-]*(\\{[A-Za-z0-9:_.\\-]+\\}[A-Za-z0-9:_.\\-]*)?")
				|| prefix.isEmpty() || prefix.length() > 64) {
			throw new LlmConfigurationException("llm.shared-state.key-prefix",
					"is '" + prefix + "', which is not a usable Redis key prefix",
					"Use 1 to 64 letters, digits and ':', '_', '.', '-', with at most one {hash-tag} "
							+ "(for Redis Cluster), e.g. llm: or {llm}:myapp:");
		}
		LlmConfigurationException.positive("llm.shared-state.timeout", properties.getTimeout(), "Use a positive duration such as 250ms or 1s.");
		LlmConfigurationException.positive("llm.shared-state.heartbeat", properties.getHeartbeat(), "Use a positive duration such as 250ms or 1s.");
		LlmConfigurationException.positive("llm.shared-state.replica-timeout", properties.getReplicaTimeout(), "Use a positive duration such as 250ms or 1s.");
		if (properties.getReplicaTimeout().compareTo(properties.getHeartbeat().multipliedBy(2)) < 0) {
			throw new LlmConfigurationException("llm.shared-state.replica-timeout",
					"is " + properties.getReplicaTimeout() + ", less than twice llm.shared-state.heartbeat ("
							+ properties.getHeartbeat() + ")",
					"Make it at least two heartbeats, or a live replica's deferred requests would be taken from it");
		}
		String name = properties.getReplicaName();
		if (name != null && !name.matches("[A-Za-z0-9:_.\\-]{1,100}")) {
			throw new LlmConfigurationException("llm.shared-state.replica-name", "is '" + name + "'",
					"Use 1 to 100 letters, digits and ':', '_', '.', '-', unique in the fleet, or leave it unset");
		}
	}

}
