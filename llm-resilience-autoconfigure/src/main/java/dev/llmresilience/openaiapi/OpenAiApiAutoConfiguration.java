package dev.llmresilience.openaiapi;

import java.time.Clock;
import java.util.List;
import java.util.Map;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.autoconfigure.OpenAiApiProperties;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmAutoConfiguration;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.RouteSelector;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.servlet.handler.SimpleUrlHandlerMapping;

/**
 * Auto-configuration of the OpenAI-compatible API ({@code llm.openai-api.enabled=true}): functional
 * routes in a WebFlux application, a handler mapping in a Servlet one.
 */
@AutoConfiguration(after = LlmAutoConfiguration.class)
@ConditionalOnBooleanProperty("llm.openai-api.enabled")
@ConditionalOnWebApplication
@ConditionalOnBean(LlmGateway.class)
@EnableConfigurationProperties(OpenAiApiProperties.class)
public final class OpenAiApiAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	OpenAiApiHandler llmOpenAiApiHandler(OpenAiApiProperties api, LlmProperties properties, LlmGateway gateway,
			EndpointRegistry endpoints, RouteSelector routeSelector) {
		List<String> keys = api.getApiKeys();
		if (keys.isEmpty() || keys.stream().anyMatch((key) -> key == null || key.isBlank())) {
			throw new LlmConfigurationException("llm.openai-api.api-keys",
					keys.isEmpty() ? "is empty while llm.openai-api.enabled=true" : "has a blank key",
					"List the keys clients send as 'Authorization: Bearer <key>', e.g. llm.openai-api.api-keys=${LLM_CLIENT_KEY}, "
							+ "or set llm.openai-api.enabled=false.");
		}
		keys.forEach((key) -> LlmConfigurationException.resolved("llm.openai-api.api-keys", key));
		long max = LlmConfigurationException.size("llm.openai-api.max-request-size", api.getMaxRequestSize(), "Use a size such as 4MB.");
		int reads = LlmConfigurationException.atLeast("llm.openai-api.max-concurrent-body-reads", api.getMaxConcurrentBodyReads(), 1,
				"Use a count such as 32.");
		basePath(api);
		return new OpenAiApiHandler(gateway, endpoints, routeSelector, new ClientKeys(keys),
				properties.getGateway().getBusyMessage(), new BodyLimits(max, reads), Clock.systemUTC());
	}

	static String basePath(OpenAiApiProperties api) {
		String path = api.getBasePath();
		if (path == null || !path.matches("(/[A-Za-z0-9._~-]+)*/?")) {
			throw new LlmConfigurationException("llm.openai-api.base-path", "is '" + path + "', which is not a plain path",
					"Use a path such as /v1 (letters, digits, '.', '_', '~' and '-' between slashes), or / for the root.");
		}
		return path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
	static class ReactiveApi {

		@Bean
		@ConditionalOnMissingBean(name = "llmOpenAiApiRoutes")
		RouterFunction<ServerResponse> llmOpenAiApiRoutes(OpenAiApiHandler handler, OpenAiApiProperties api) {
			return new WebFluxOpenAiApi(handler).routes(basePath(api));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
	@ConditionalOnClass(name = { "org.springframework.web.servlet.DispatcherServlet", "jakarta.servlet.http.HttpServletRequest" })
	static class ServletApi {

		/** After the application's own controllers (order 0), before the static resources (the lowest). */
		private static final int ORDER = 1;

		@Bean
		@ConditionalOnMissingBean(name = "llmOpenAiApiHandlerMapping")
		SimpleUrlHandlerMapping llmOpenAiApiHandlerMapping(OpenAiApiHandler handler, OpenAiApiProperties api) {
			String base = basePath(api);
			ServletOpenAiApi servlet = new ServletOpenAiApi(handler, base);
			// every other path under the base path gets the API's 404; at the root that would take
			// every path the application's own mappings do not
			Map<String, Object> paths = base.isEmpty()
					? Map.of(base + "/chat/completions", servlet, base + "/responses", servlet, base + "/models", servlet)
					: Map.of(base + "/chat/completions", servlet, base + "/responses", servlet, base + "/models", servlet,
							base + "/**", servlet);
			return new SimpleUrlHandlerMapping(paths, ORDER);
		}

	}

}
