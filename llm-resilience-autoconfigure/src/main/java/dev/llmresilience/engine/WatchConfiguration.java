package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.spi.BreakerControl;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * What makes the gateway's state visible whether or not Actuator is there: the breakers' transition
 * history and log, each endpoint's last 15 minutes, and the routes' degradation watch (a gateway listener). Imported by
 * {@link LlmAutoConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
class WatchConfiguration {

	/** Remembers and logs every breaker's state transitions. */
	@Bean
	@ConditionalOnMissingBean
	BreakerTransitions llmBreakerTransitions(EndpointRegistry endpoints, BreakerControl control) {
		return new BreakerTransitions(endpoints, control);
	}

	/** Each endpoint's last 15 minutes (a gateway listener), for the actuator and the dashboard. */
	@Bean
	@ConditionalOnMissingBean
	EndpointHistory llmEndpointHistory(EndpointRegistry endpoints, BreakerControl control) {
		return new EndpointHistory(endpoints, control, Clock.systemUTC());
	}

	@Bean
	@ConditionalOnMissingBean
	DegradationWatch llmDegradationWatch(EndpointRegistry endpoints, LlmProperties properties) {
		LlmProperties.Degradation degradation = properties.getDegradation();
		Duration window = degradation.getWindow();
		if (window == null || window.compareTo(Duration.ofSeconds(1)) < 0 || window.compareTo(Duration.ofHours(1)) > 0
				|| window.toMillis() % 1000 != 0) {
			throw new LlmConfigurationException("llm.degradation.window", "is " + window + ", not whole seconds from 1s to 1h",
					"Use a duration such as 5m (the default), 30s or 1h.");
		}
		Duration warnAfter = degradation.getWarnAfter();
		if (warnAfter == null || warnAfter.isNegative()) {
			throw new LlmConfigurationException("llm.degradation.warn-after", "is " + warnAfter + ", negative",
					"Use a duration such as 2m (the default), or 0 to switch the WARN off.");
		}
		return new DegradationWatch(endpoints, window, warnAfter, Clock.systemUTC());
	}

}
