package dev.llmresilience.autoconfigure;

import java.time.Clock;
import java.time.Duration;

import dev.llmresilience.cache.CaffeineFallbackCache;
import dev.llmresilience.cache.FallbackCache;
import dev.llmresilience.cache.SpringCacheFallbackCache;
import dev.llmresilience.deferred.DeferredQueue;
import dev.llmresilience.deferred.DeferredStore;
import dev.llmresilience.deferred.InMemoryDeferredStore;
import dev.llmresilience.gateway.RouteSelector;
import dev.llmresilience.guard.BudgetGuard;
import dev.llmresilience.guard.CallVolumeGuard;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cache.Cache;
import org.springframework.cache.CacheManager;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The gateway's degradation: route selection, the call-volume guard, the budget, the deferred
 * queue and the last-good-answer cache. Imported by {@link LlmAutoConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
class DegradationConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RouteSelector llmRouteSelector() {
		return RouteSelector.DEFAULT;
	}

	@Bean
	@ConditionalOnMissingBean
	CallVolumeGuard llmCallVolumeGuard(LlmProperties properties) {
		int max = properties.getGateway().getGuard().getMaxCallsPerHour();
		if (max < 0) {
			throw new LlmConfigurationException("llm.gateway.guard.max-calls-per-hour", "is " + max + ", negative",
					"Use 0 to switch the guard off, or the number of upstream calls allowed per hour.");
		}
		return new CallVolumeGuard(max, Duration.ofHours(1));
	}

	@Bean
	@ConditionalOnMissingBean
	BudgetGuard llmBudgetGuard(LlmProperties properties) {
		LlmProperties.Budget budget = properties.getGateway().getBudget();
		if (budget.getMaxCostPerDay() == null || budget.getMaxCostPerDay().signum() < 0) {
			throw new LlmConfigurationException("llm.gateway.budget.max-cost-per-day",
					"is " + budget.getMaxCostPerDay() + ", negative",
					"Use 0 to switch the budget off, or the most the day's answers may cost.");
		}
		return new BudgetGuard(budget.getMaxCostPerDay(), Clock.systemUTC(), budget.getZone());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "llm.gateway.deferral.enabled", matchIfMissing = true)
	DeferredStore llmDeferredStore(LlmProperties properties) {
		Duration retention = properties.getGateway().getDeferral().getRetention();
		requirePositive("llm.gateway.deferral.retention", retention);
		int maxRetained = properties.getGateway().getDeferral().getMaxRetained();
		requireAtLeastOne("llm.gateway.deferral.max-retained", maxRetained);
		return new InMemoryDeferredStore(retention, maxRetained, Clock.systemUTC());
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "llm.gateway.deferral.enabled", matchIfMissing = true)
	DeferredQueue llmDeferredQueue(LlmProperties properties, DeferredStore store, ApplicationEventPublisher events) {
		DeferralProperties deferral = properties.getGateway().getDeferral();
		requirePositive("llm.gateway.deferral.delay", deferral.getDelay());
		requireAtLeastOne("llm.gateway.deferral.max-attempts", deferral.getMaxAttempts());
		requireAtLeastOne("llm.gateway.deferral.capacity", deferral.getCapacity());
		return new DeferredQueue(store, deferral.getDelay(), deferral.getMaxAttempts(), deferral.getCapacity(), events,
				Clock.systemUTC());
	}

	/**
	 * The application's cache (by {@code cache-name}) when it has a {@link CacheManager}, else a
	 * bounded in-memory Caffeine cache.
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "llm.gateway.fallback-cache.enabled")
	FallbackCache llmFallbackCache(LlmProperties properties, ObjectProvider<CacheManager> cacheManager) {
		FallbackCacheProperties settings = properties.getGateway().getFallbackCache();
		requirePositive("llm.gateway.fallback-cache.ttl", settings.getTtl());
		CacheManager manager = cacheManager.getIfUnique();
		if (manager != null) {
			Cache cache = manager.getCache(settings.getCacheName());
			if (cache == null) {
				throw new LlmConfigurationException("llm.gateway.fallback-cache.cache-name",
						"names cache '" + settings.getCacheName() + "', which the application's CacheManager does not have",
						"Declare that cache (e.g. spring.cache.cache-names) or set cache-name to one that exists.");
			}
			return new SpringCacheFallbackCache(cache, settings.getTtl(), Clock.systemUTC());
		}
		if (settings.getMaxEntries() < 1) {
			throw new LlmConfigurationException("llm.gateway.fallback-cache.max-entries",
					"is " + settings.getMaxEntries() + ", less than 1", "Use the number of answers to keep, e.g. 10000.");
		}
		return new CaffeineFallbackCache(settings.getMaxEntries(), settings.getTtl(), Clock.systemUTC());
	}

	private static void requirePositive(String property, Duration value) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new LlmConfigurationException(property, "is " + value + ", but must be positive",
					"Use a positive duration such as 30s, 5m or 1h.");
		}
	}

	private static void requireAtLeastOne(String property, int value) {
		if (value < 1) {
			throw new LlmConfigurationException(property, "is " + value + ", but must be at least 1",
					"Set it to 1 or more.");
		}
	}

}
