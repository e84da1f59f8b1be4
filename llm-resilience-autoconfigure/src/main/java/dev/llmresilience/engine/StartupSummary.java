package dev.llmresilience.engine;

import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import dev.llmresilience.autoconfigure.EndpointProperties;
import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.openai.OpenAiClientFactory;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Says at start-up what was resolved: one INFO line with every endpoint (model, host, its protocol
 * unless it is {@code openai}, priority) and every route in the order its endpoints are tried, with
 * a note where equal priorities were ordered by name; and a WARN per endpoint that has no api-key although it is not marked as
 * needing none, since its first sign would otherwise be a 401 on the first call.
 */
final class StartupSummary {

	private static final Log logger = LogFactory.getLog(StartupSummary.class);

	private StartupSummary() {
	}

	static void log(List<EndpointSettings> endpoints, Map<String, List<String>> routes, LlmProperties properties,
			boolean defaultRouteDerived) {
		if (logger.isInfoEnabled()) {
			logger.info(summary(endpoints, routes, defaultRouteDerived));
		}
		for (EndpointSettings endpoint : endpoints) {
			EndpointProperties configured = properties.getEndpoints().get(endpoint.name());
			boolean required = configured == null || configured.isApiKeyRequired();
			if (required && endpoint.routing().enabled() && !endpoint.upstream().apiKey().isPresent()
					&& !hasAuthHeader(endpoint)) {
				String property = EndpointSettingsResolver.property(endpoint.name());
				logger.warn("LLM endpoint '" + endpoint.name() + "' has no api-key (" + property
						+ ".api-key is empty or unset): its requests carry no Authorization header, and a provider "
						+ "that needs a key will answer 401. Set it, e.g. " + property + ".api-key=${OPENAI_API_KEY}, "
						+ "or set " + property + ".api-key-required=false for a server that needs none (Ollama, vLLM).");
			}
		}
	}

	static String summary(List<EndpointSettings> endpoints, Map<String, List<String>> routes, boolean defaultRouteDerived) {
		String described = endpoints.stream().map(StartupSummary::describe).collect(Collectors.joining(", "));
		List<String> routeTexts = new ArrayList<>();
		routes.forEach((route, members) -> {
			String text = route + " " + String.join(" -> ", members);
			if (route.equals(EndpointRegistry.DEFAULT_ROUTE) && defaultRouteDerived) {
				text += " (every enabled endpoint by priority" + ties(endpoints) + ")";
			}
			routeTexts.add(text);
		});
		return "llm-resilience: " + endpoints.size() + ((endpoints.size() == 1) ? " endpoint: " : " endpoints: ")
				+ described + "; routes: " + String.join("; ", routeTexts);
	}

	private static String describe(EndpointSettings endpoint) {
		URI url = endpoint.upstream().baseUrl();
		String host = url.getHost() + ((url.getPort() != -1) ? ":" + url.getPort() : "");
		// the default protocol goes unsaid: most endpoints speak it
		String protocol = OpenAiClientFactory.PROTOCOL.equals(endpoint.upstream().protocol()) ? ""
				: ", protocol " + endpoint.upstream().protocol();
		return endpoint.name() + " (model " + endpoint.upstream().model() + " at " + host + protocol + ", priority "
				+ endpoint.routing().priority() + (endpoint.routing().enabled() ? "" : ", disabled") + ")";
	}

	private static String ties(List<EndpointSettings> endpoints) {
		Map<Integer, List<String>> byPriority = new LinkedHashMap<>();
		endpoints.stream()
			.filter((endpoint) -> endpoint.routing().enabled())
			.forEach((endpoint) -> byPriority
				.computeIfAbsent(endpoint.routing().priority(), (priority) -> new ArrayList<>())
				.add(endpoint.name()));
		List<String> ties = new ArrayList<>();
		byPriority.forEach((priority, names) -> {
			if (names.size() > 1) {
				ties.add(String.join(", ", names) + " share priority " + priority);
			}
		});
		return ties.isEmpty() ? ""
				: "; " + String.join("; ", ties) + ", so they are ordered by name: set llm.endpoints.<name>.priority "
						+ "to choose, or llm.routes.default.balance=weighted to share the calls";
	}

	private static boolean hasAuthHeader(EndpointSettings endpoint) {
		return endpoint.upstream().headers().keySet().stream().map((name) -> name.toLowerCase(Locale.ROOT))
			.anyMatch((name) -> name.equals("authorization") || name.equals("api-key") || name.equals("x-api-key"));
	}

}
