package dev.llmresilience.dashboard;

import java.time.Duration;
import java.util.Set;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmAutoConfiguration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication.Type;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Auto-configuration of the live dashboard, {@code GET /llm/dashboard}, when
 * {@code llm.dashboard.enabled=true}: a functional route in a WebFlux or a Servlet application.
 */
@AutoConfiguration(after = LlmAutoConfiguration.class)
@ConditionalOnBooleanProperty("llm.dashboard.enabled")
@ConditionalOnWebApplication
@ConditionalOnBean(EndpointRegistry.class)
public final class LlmDashboardAutoConfiguration {

	private static final Log logger = LogFactory.getLog(LlmDashboardAutoConfiguration.class);

	private static final Duration SHORTEST_REFRESH = Duration.ofMillis(500);

	private static final Duration LONGEST_REFRESH = Duration.ofMinutes(1);

	@Bean
	@ConditionalOnMissingBean
	DashboardPage llmDashboardPage(LlmProperties properties, Environment environment) {
		Duration refresh = properties.getDashboard().getRefresh();
		LlmConfigurationException.check(refresh != null && refresh.compareTo(SHORTEST_REFRESH) >= 0 && refresh.compareTo(LONGEST_REFRESH) <= 0,
				"llm.dashboard.refresh", refresh, "outside 500ms to 1m", "Use a duration such as 2s (the default).");
		Binder binder = Binder.get(environment);
		String basePath = binder.bind("management.endpoints.web.base-path", String.class).orElse("/actuator");
		String endpointPath = binder.bind("management.endpoints.web.path-mapping.llmbreakers", String.class)
			.orElse("llmbreakers");
		Set<String> exposed = binder.bind("management.endpoints.web.exposure.include", Bindable.setOf(String.class))
			.orElse(Set.of("health"));
		Set<String> excluded = binder.bind("management.endpoints.web.exposure.exclude", Bindable.setOf(String.class))
			.orElse(Set.of());
		if (!(exposed.contains("*") || exposed.contains("llmbreakers")) || excluded.contains("llmbreakers")) {
			logger.warn("llm.dashboard.enabled=true, but the llmbreakers actuator endpoint is not exposed over HTTP, "
					+ "so " + DashboardPage.PATH + " can show no data: add llmbreakers to "
					+ "management.endpoints.web.exposure.include.");
		}
		return new DashboardPage(DashboardPage.source(basePath, endpointPath), refresh);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = Type.REACTIVE)
	static class ReactiveDashboardConfiguration {

		@Bean
		org.springframework.web.reactive.function.server.RouterFunction<org.springframework.web.reactive.function.server.ServerResponse> llmDashboardRoute(
				DashboardPage page) {
			return ReactiveDashboardRoute.of(page);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = Type.SERVLET)
	@ConditionalOnClass(name = "org.springframework.web.servlet.function.RouterFunction")
	static class ServletDashboardConfiguration {

		@Bean
		org.springframework.web.servlet.function.RouterFunction<org.springframework.web.servlet.function.ServerResponse> llmDashboardServletRoute(
				DashboardPage page) {
			return ServletDashboardRoute.of(page);
		}

	}

}
