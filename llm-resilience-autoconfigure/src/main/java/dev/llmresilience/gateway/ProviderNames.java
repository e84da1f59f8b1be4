package dev.llmresilience.gateway;

import java.net.URI;
import java.util.Locale;

/**
 * The provider's name as OpenTelemetry's GenAI conventions spell it ({@code gen_ai.provider.name}),
 * guessed from an endpoint's host, else from its protocol.
 */
final class ProviderNames {

	private ProviderNames() {
	}

	static String of(URI baseUrl, String protocol) {
		String host = (baseUrl.getHost() != null) ? baseUrl.getHost().toLowerCase(Locale.ROOT) : "";
		if (host.endsWith("openai.azure.com") || host.endsWith("services.ai.azure.com")
				|| "azure-openai".equals(protocol)) {
			return "azure.ai.openai";
		}
		if (host.endsWith("anthropic.com") || "anthropic".equals(protocol)) {
			return "anthropic";
		}
		if (host.endsWith("openai.com") || "openai-responses".equals(protocol)) {
			return "openai";
		}
		if (host.endsWith("deepseek.com")) {
			return "deepseek";
		}
		if (host.endsWith("openrouter.ai")) {
			return "openrouter";
		}
		if (host.endsWith("mistral.ai")) {
			return "mistral_ai";
		}
		if (host.endsWith("groq.com")) {
			return "groq";
		}
		return protocol;
	}

}
