package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;

import dev.llmresilience.autoconfigure.DeferralProperties;
import dev.llmresilience.autoconfigure.GatewayProperties;
import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.spi.DeferredStore;
import dev.llmresilience.spi.FallbackCache;
import dev.llmresilience.spi.RouteSelector;
import dev.llmresilience.spi.SharedState;
import dev.llmresilience.spi.SharedState.CallCounter;
import dev.llmresilience.spi.SharedState.SpendLedger;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cache.Cache;
import org.springframework.cache.CacheManager;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The gateway's degradation: route selection, the call-volume guard, the limit on calls in flight,
 * the budget, the deferred queue and the last-good-answer cache. Imported by
 * {@link LlmAutoConfiguration}. The guard, the budget and the deferred store count the fleet's
 * calls, cost and requests when the {@link SharedState} shares them, else this instance's.
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
	CallVolumeGuard llmCallVolumeGuard(LlmProperties properties, SharedState sharedState) {
		int max = properties.getGateway().getGuard().getMaxCallsPerHour();
		LlmConfigurationException.notNegative("llm.gateway.guard.max-calls-per-hour", max, 0,
				"Use 0 to switch the guard off, or the number of upstream calls allowed per hour.");
		CallCounter shared = (max > 0) ? sharedState.callCounter(max, Duration.ofHours(1)) : null;
		return (shared != null) ? new CallVolumeGuard(max, shared) : new CallVolumeGuard(max, Duration.ofHours(1));
	}

	@Bean
	@ConditionalOnMissingBean
	ConcurrencyLimit llmConcurrencyLimit(LlmProperties properties) {
		int max = properties.getGateway().getMaxConcurrentCalls();
		LlmConfigurationException.notNegative("llm.gateway.max-concurrent-calls", max, 0,
				"Use 0 to switch the limit off, or the number of gateway calls allowed in flight at once.");
		return new ConcurrencyLimit(max);
	}

	@Bean
	@ConditionalOnMissingBean
	BudgetGuard llmBudgetGuard(LlmProperties properties, SharedState sharedState) {
		GatewayProperties.Budget budget = properties.getGateway().getBudget();
		LlmConfigurationException.notNegative("llm.gateway.budget.max-cost-per-day", budget.getMaxCostPerDay(), BigDecimal.ZERO,
				"Use 0 to switch the budget off, or the most the day's answers may cost.");
		SpendLedger shared = sharedState.spendLedger(budget.getMaxCostPerDay());
		return new BudgetGuard(budget.getMaxCostPerDay(), Clock.systemUTC(), budget.getZone(),
				(shared != null) ? shared : SpendLedger.local());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "llm.gateway.deferral.enabled", matchIfMissing = true)
	DeferredStore llmDeferredStore(LlmProperties properties, SharedState sharedState) {
		Duration retention = properties.getGateway().getDeferral().getRetention();
		LlmConfigurationException.positive("llm.gateway.deferral.retention", retention, "Use a positive duration such as 30s, 5m or 1h.");
		int maxRetained = properties.getGateway().getDeferral().getMaxRetained();
		LlmConfigurationException.atLeast("llm.gateway.deferral.max-retained", maxRetained, 1, "Set it to 1 or more.");
		DeferredStore shared = sharedState.deferredStore(retention);
		return (shared != null) ? shared : new InMemoryDeferredStore(retention, maxRetained, Clock.systemUTC());
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty(name = "llm.gateway.deferral.enabled", matchIfMissing = true)
	DeferredQueue llmDeferredQueue(LlmProperties properties, DeferredStore store, ApplicationEventPublisher events) {
		DeferralProperties deferral = properties.getGateway().getDeferral();
		LlmConfigurationException.positive("llm.gateway.deferral.delay", deferral.getDelay(), "Use a positive duration such as 30s, 5m or 1h.");
		LlmConfigurationException.atLeast("llm.gateway.deferral.max-attempts", deferral.getMaxAttempts(), 1, "Set it to 1 or more.");
		LlmConfigurationException.atLeast("llm.gateway.deferral.capacity", deferral.getCapacity(), 1, "Set it to 1 or more.");
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
		GatewayProperties.FallbackCache settings = properties.getGateway().getFallbackCache();
		LlmConfigurationException.positive("llm.gateway.fallback-cache.ttl", settings.getTtl(), "Use a positive duration such as 30s, 5m or 1h.");
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
		LlmConfigurationException.atLeast("llm.gateway.fallback-cache.max-entries", settings.getMaxEntries(), 1L,
				"Use the number of answers to keep, e.g. 10000.");
		return new CaffeineFallbackCache(settings.getMaxEntries(), settings.getTtl(), Clock.systemUTC());
	}

}
