package dev.llmresilience.autoconfigure;

import dev.llmresilience.actuate.LlmBreakersEndpoint;
import dev.llmresilience.actuate.LlmBreakersEndpointWebExtension;
import dev.llmresilience.endpoint.EndpointRegistry;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the {@code llmbreakers} actuator endpoint.
 */
@AutoConfiguration(after = LlmAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnAvailableEndpoint(LlmBreakersEndpoint.class)
public final class LlmBreakersEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(EndpointRegistry.class)
	LlmBreakersEndpoint llmBreakersEndpoint(EndpointRegistry endpoints) {
		return new LlmBreakersEndpoint(endpoints);
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(LlmBreakersEndpoint.class)
	LlmBreakersEndpointWebExtension llmBreakersEndpointWebExtension(LlmBreakersEndpoint endpoint) {
		return new LlmBreakersEndpointWebExtension(endpoint);
	}

}
