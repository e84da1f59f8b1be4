package dev.llmresilience.redis;

import java.util.Map;

import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.ClassUtils;

/**
 * Keeps Boot's Redis health indicator from taking {@code /actuator/health} DOWN over a Redis that
 * nobody uses: with Spring Data Redis on the class path (added for {@code llm.shared-state.type=redis})
 * while the shared state is {@code local} and no {@code spring.data.redis.*} property is set, Boot
 * would still check its default {@code localhost:6379}. Then {@code management.health.redis.enabled}
 * defaults to false, below every property source of the application, so that a value it sets wins.
 * With shared state on Redis the {@code llm} health contributor reports it (and Boot's indicator is
 * left alone: see docs/shared-state.md).
 */
final class RedisHealthDefaults implements EnvironmentPostProcessor, Ordered {

	/** The name of the property source holding the default. */
	static final String SOURCE = "llmUnusedRedisHealthOff";

	static final String ENABLED = "management.health.redis.enabled";

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		if (!ClassUtils.isPresent("org.springframework.data.redis.connection.RedisConnectionFactory",
				getClass().getClassLoader()) || environment.getPropertySources().contains(SOURCE)) {
			return;
		}
		Binder binder = Binder.get(environment);
		boolean local = !"redis".equalsIgnoreCase(binder.bind("llm.shared-state.type", String.class).orElse("local").trim());
		boolean redisConfigured = binder.bind("spring.data.redis", Bindable.mapOf(String.class, Object.class)).isBound();
		if (local && !redisConfigured && !binder.bind(ENABLED, Boolean.class).isBound()) {
			environment.getPropertySources().addLast(new MapPropertySource(SOURCE, Map.of(ENABLED, false)));
		}
	}

	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE;
	}

}
