package dev.llmresilience.engine;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import dev.llmresilience.autoconfigure.HedgeProperties;
import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Which routes hedge their requests ({@code llm.gateway.hedge}), each key checked at start-up.
 * Imported by {@link LlmAutoConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
class HedgingConfiguration {

	private static final String PREFIX = "llm.gateway.hedge";

	@Bean
	@ConditionalOnMissingBean
	Hedging llmHedging(LlmProperties properties, EndpointRegistry endpoints) {
		HedgeProperties hedge = properties.getGateway().getHedge();
		HedgeSettings defaults = settings(PREFIX, hedge.isEnabled(), hedge.isAdaptive(), hedge.getPercentile(),
				hedge.getDelay(), hedge.getMinDelay(), hedge.getMaxRatio(), hedge.getWindow(), hedge.isByPromptSize());
		Set<String> routes = endpoints.routeNames().keySet();
		Map<String, HedgeSettings> own = new LinkedHashMap<>();
		hedge.getRoutes().forEach((route, settings) -> {
			String prefix = PREFIX + ".routes." + route;
			if (!routes.contains(route)) {
				throw new LlmConfigurationException(prefix, "names route '" + route + "', which is not configured",
						"Use one of the routes " + routes + " (llm.routes), or remove the entry.");
			}
			own.put(route, settings(prefix, or(settings.getEnabled(), defaults.enabled()),
					or(settings.getAdaptive(), defaults.adaptive()), or(settings.getPercentile(), defaults.percentile()),
					or(settings.getDelay(), defaults.delay()), or(settings.getMinDelay(), defaults.minDelay()),
					or(settings.getMaxRatio(), defaults.maxRatio()), or(settings.getWindow(), defaults.window()),
					or(settings.getByPromptSize(), defaults.byPromptSize())));
		});
		return new Hedging(defaults, own, routes);
	}

	private static HedgeSettings settings(String prefix, boolean enabled, boolean adaptive, double percentile,
			@Nullable Duration delay, @Nullable Duration minDelay, double maxRatio, @Nullable Duration window,
			boolean byPromptSize) {
		LlmConfigurationException.check(percentile > 0 && percentile < 100, prefix + ".percentile", percentile, "outside (0, 100)",
				"Use a percentile above 0 and below 100, such as 95.");
		LlmConfigurationException.positive(prefix + ".delay", delay, "Use a positive duration such as 2s.");
		LlmConfigurationException.notNegative(prefix + ".min-delay", minDelay, "Use 0 for no floor, or a duration such as 100ms.");
		LlmConfigurationException.check(maxRatio >= 0 && maxRatio <= 1, prefix + ".max-ratio", maxRatio, "outside [0, 1]",
				"Use the most hedged calls as a share of the route's calls, such as 0.1 for 10 %.");
		LlmConfigurationException.positive(prefix + ".window", window, "Use a positive duration such as 1m.");
		return new HedgeSettings(enabled, adaptive, percentile, delay, minDelay, maxRatio, window, byPromptSize);
	}

	private static <T> T or(@Nullable T value, T fallback) {
		return (value != null) ? value : fallback;
	}

}
