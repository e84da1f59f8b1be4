package dev.llmresilience.protocol.openai;

import java.net.URI;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.ClientSettings.InvalidOptionException;
import dev.llmresilience.protocol.ClientSettings.ProtocolOptions;
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

	private static final Pattern API_VERSION = Pattern.compile("\\d{4}-\\d{2}-\\d{2}(-preview)?");

	// Azure's rule for deployment names; the name goes into the request path as it is.
	private static final Pattern DEPLOYMENT = Pattern.compile("[A-Za-z0-9._-]{1,64}");

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
	 * Keep the endpoint's {@code deployment} (required, a deployment name) and {@code api-version}
	 * (a GA or preview version), after checking that the base URL is the resource's endpoint alone.
	 * @param options what the endpoint set
	 * @param prefix the endpoint's property prefix, with its trailing dot
	 * @param baseUrl the endpoint's base URL
	 * @return its deployment and api-version
	 * @throws InvalidOptionException when the base URL has the path the client adds, or the deployment
	 * or the api-version is missing or malformed
	 */
	@Override
	public ProtocolOptions options(ProtocolOptions options, String prefix, URI baseUrl) {
		resourceEndpoint(prefix + "base-url", baseUrl);
		return new ProtocolOptions(Map.of(ProtocolOptions.DEPLOYMENT, deployment(prefix, options),
				ProtocolOptions.API_VERSION, apiVersion(prefix, options)));
	}

	// The client adds /openai/deployments/<deployment>/chat/completions itself.
	private static void resourceEndpoint(String property, URI baseUrl) {
		String path = baseUrl.getPath();
		if (path != null && (path.contains("/deployments") || path.endsWith("/openai/v1"))) {
			throw new InvalidOptionException(property, "has the path '" + path + "'",
					"For protocol azure-openai give the resource's endpoint only, e.g. " + property
							+ "=https://my-resource.openai.azure.com, and the deployment in deployment. For Azure's "
							+ "v1 API (.../openai/v1) use protocol openai instead.");
		}
	}

	private static String deployment(String prefix, ProtocolOptions options) {
		String property = prefix + ProtocolOptions.DEPLOYMENT;
		String deployment = options.get(ProtocolOptions.DEPLOYMENT);
		if (deployment == null) {
			throw new InvalidOptionException(property, "is missing",
					"Set it to the name of the model deployment in your Azure OpenAI resource (Azure AI Foundry, "
							+ "Deployments), e.g. " + property + "=gpt-4o.");
		}
		if (!DEPLOYMENT.matcher(deployment).matches()) {
			throw new InvalidOptionException(property, "is '" + deployment + "', which is not a deployment name",
					"Use the deployment's name as Azure shows it: up to 64 letters, digits, '.', '_' and '-'.");
		}
		return deployment;
	}

	private static String apiVersion(String prefix, ProtocolOptions options) {
		String version = options.get(ProtocolOptions.API_VERSION);
		// The key has a default, so an endpoint without one set it blank.
		if (version == null || !API_VERSION.matcher(version).matches()) {
			throw new InvalidOptionException(prefix + ProtocolOptions.API_VERSION, (version == null) ? "is empty"
					: "is '" + version + "', which is not an Azure OpenAI API version",
					"Use a version such as 2024-10-21 (the default) or 2025-01-01-preview, as Azure's API reference "
							+ "lists them.");
		}
		return version;
	}

	/**
	 * Create the client of a deployment with a connection pool of its own, which closing the client
	 * disposes.
	 * @param settings the endpoint's settings; its {@code deployment} is required, its
	 * {@code api-version} {@value #DEFAULT_API_VERSION} when it has none
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
		String deployment = Objects.requireNonNull(settings.options().get(ProtocolOptions.DEPLOYMENT),
				() -> "Endpoint '" + settings.name() + "' of protocol azure-openai has no deployment");
		String apiVersion = Objects.requireNonNullElse(settings.options().get(ProtocolOptions.API_VERSION),
				DEFAULT_API_VERSION);
		// A base URL given with Azure's /openai already on it (as some portals copy it) is taken as it is.
		String prefix = settings.baseUrl().getPath().endsWith(AZURE_PATH) ? "" : AZURE_PATH;
		String path = prefix + "/deployments/" + deployment + "/chat/completions?api-version=" + apiVersion;
		return new OpenAiDialect(path, false, apiVersion.compareTo(FIRST_WITH_STREAM_USAGE) >= 0);
	}

}
