package dev.llmresilience.engine;

import java.util.ArrayList;
import java.util.List;

import dev.llmresilience.autoconfigure.LlmProperties;
import dev.llmresilience.protocol.Redaction;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.core.env.Environment;

/**
 * Every secret the application configures for the starter, for redacting provider text: each
 * endpoint's {@code api-key} and header values, and the OpenAI-compatible API's client keys (read
 * from the environment, so that they are known whether or not that API is enabled). A provider may
 * quote a key it was never sent (a shared proxy, a key pasted into the wrong endpoint), so each
 * endpoint's text is redacted of all of them, not only of its own.
 */
final class ConfiguredSecrets {

	private ConfiguredSecrets() {
	}

	static List<String> of(LlmProperties properties, Environment environment) {
		List<String> secrets = new ArrayList<>();
		properties.getEndpoints().values().forEach((endpoint) -> {
			add(secrets, endpoint.getApiKey());
			endpoint.getHeaders().values().forEach((value) -> add(secrets, value));
		});
		Binder.get(environment)
			.bind("llm.openai-api.api-keys", Bindable.listOf(String.class))
			.orElse(List.of())
			.forEach((key) -> add(secrets, key));
		return List.copyOf(secrets);
	}

	// Shorter values are left to each endpoint's own redaction: redacted from every text they would
	// garble words (a version such as v1 in a header)
	private static void add(List<String> secrets, @Nullable String value) {
		if (value != null && value.trim().length() >= Redaction.SHORTEST_PART) {
			secrets.add(value.trim());
		}
	}

}
