package dev.llmresilience.protocol.openai;

import java.util.Objects;
import java.util.function.Supplier;

import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.LlmClientFactory;
import dev.llmresilience.protocol.UpstreamFailures;

import org.springframework.web.reactive.function.client.WebClient;

/**
 * Creates the clients of Azure OpenAI deployments ({@code protocol: azure-openai}). Azure's
 * deployment API takes and gives the same JSON and server-sent events as OpenAI's chat completions,
 * so the client is the OpenAI-format one, sent elsewhere: to
 * {@code {base-url}/openai/deployments/{deployment}/chat/completions?api-version={api-version}},
 * with the key as {@code api-key} and no {@code model} in the body (the deployment decides). Azure's
 * own signals need no client of their own: its content filter ({@code code: content_filter} in a
 * 400, {@code finish_reason: content_filter} in an answer or a stream) and its
 * {@code retry-after-ms} / {@code x-ms-retry-after-ms} / {@code retry-after} headers are read by the
 * failure rules every OpenAI-format endpoint goes through, and the chunks of its stream that carry
 * only filter annotations ({@code choices: []}, or a choice without a delta) add nothing to the answer.
 */
public final class AzureOpenAiClientFactory implements LlmClientFactory {

	/** The protocol name of this client. */
	public static final String PROTOCOL = "azure-openai";

	/** The {@code api-version} sent when the settings name none: the latest GA version. */
	public static final String DEFAULT_API_VERSION = "2024-10-21";

	// stream_options (usage in streams) came with 2024-09-01-preview; earlier versions refuse the field.
	private static final String FIRST_WITH_STREAM_USAGE = "2024-09-01";

	private static final String AZURE_PATH = "/openai";

	private final OpenAiClientFactory openAi;

	/**
	 * Create a factory.
	 * @param failures what the provider's failures stand for
	 * @param builders a new builder (a clone of the application's) for each endpoint
	 */
	public AzureOpenAiClientFactory(UpstreamFailures failures, Supplier<WebClient.Builder> builders) {
		this.openAi = new OpenAiClientFactory(failures, builders);
	}

	@Override
	public String protocol() {
		return PROTOCOL;
	}

	/**
	 * Create the client of a deployment with a connection pool of its own, which closing the client
	 * disposes.
	 * @param settings the endpoint's settings; its {@code deployment} is required
	 * @return the client
	 */
	@Override
	public OpenAiChatClient create(ClientSettings settings) {
		return this.openAi.create(settings, dialect(settings), (headers, key) -> headers.set("api-key", key));
	}

	/**
	 * Where a deployment's requests go.
	 * @param settings the endpoint's settings
	 * @return the dialect
	 */
	static OpenAiDialect dialect(ClientSettings settings) {
		String deployment = Objects.requireNonNull(settings.deployment(),
				() -> "Endpoint '" + settings.name() + "' of protocol azure-openai has no deployment");
		String apiVersion = Objects.requireNonNullElse(settings.apiVersion(), DEFAULT_API_VERSION);
		// A base URL given with Azure's /openai already on it (as some portals copy it) is taken as it is.
		String prefix = settings.baseUrl().getPath().endsWith(AZURE_PATH) ? "" : AZURE_PATH;
		String path = prefix + "/deployments/" + deployment + "/chat/completions?api-version=" + apiVersion;
		return new OpenAiDialect(path, false, apiVersion.compareTo(FIRST_WITH_STREAM_USAGE) >= 0);
	}

}
