package dev.llmresilience.engine;

import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.spi.SharedState;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code llm} health contributor. Switch it off with
 * {@code management.health.llm.enabled=false}.
 */
@AutoConfiguration(after = LlmAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean(EndpointRegistry.class)
@ConditionalOnEnabledHealthIndicator("llm")
public final class LlmHealthContributorAutoConfiguration {

	@Bean(name = "llmHealthIndicator")
	@ConditionalOnMissingBean(name = "llmHealthIndicator")
	LlmHealthIndicator llmHealthIndicator(EndpointRegistry endpoints, LlmProperties properties,
			ObjectProvider<DegradationWatch> degradation, ObjectProvider<SharedState> sharedState) {
		return new LlmHealthIndicator(endpoints, properties.getHealth().isDownWhenRouteUnavailable(),
				degradation.getIfAvailable(), sharedState.getIfAvailable(() -> SharedState.LOCAL));
	}

}
