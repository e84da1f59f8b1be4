package dev.llmresilience.engine;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.regex.Pattern;

import dev.llmresilience.autoconfigure.EndpointProperties;
import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.protocol.anthropic.AnthropicClientFactory;
import dev.llmresilience.protocol.openai.AzureOpenAiClientFactory;
import dev.llmresilience.protocol.openai.OpenAiClientFactory;
import org.jspecify.annotations.Nullable;

/**
 * The endpoint keys whose rules depend on the protocol: the {@code base-url} (its examples), and the
 * keys that only some protocols read ({@code anthropic-version}, {@code deployment},
 * {@code api-version}), validated for the built-in protocol that reads them. A protocol added by an
 * application's own {@code LlmClientFactory} gets those as they are set.
 */
final class ProtocolSettings {

	private static final Pattern VERSION_DATE = Pattern.compile("\\d{4}-\\d{2}-\\d{2}");

	private static final Pattern API_VERSION = Pattern.compile("\\d{4}-\\d{2}-\\d{2}(-preview)?");

	// Azure's rule for deployment names; the name goes into the request path as it is.
	private static final Pattern DEPLOYMENT = Pattern.compile("[A-Za-z0-9._-]{1,64}");

	private ProtocolSettings() {
	}

	/**
	 * The protocol-specific values of an endpoint.
	 *
	 * @param anthropicVersion the {@code anthropic-version}, or {@code null}
	 * @param deployment the Azure deployment, or {@code null}
	 * @param apiVersion the Azure {@code api-version}, or {@code null}
	 */
	record Values(@Nullable String anthropicVersion, @Nullable String deployment, @Nullable String apiVersion) {
	}

	/**
	 * Validate and keep the values the endpoint's protocol reads.
	 * @param prefix the endpoint's property prefix, with its trailing dot
	 * @param endpoint the endpoint's properties
	 * @param baseUrl its validated base URL
	 * @return the values, {@code null} where the protocol has no use for one
	 */
	static Values resolve(String prefix, EndpointProperties endpoint, URI baseUrl) {
		String protocol = endpoint.getProtocol();
		String deployment = trimmed(endpoint.getDeployment());
		if (deployment != null && (OpenAiClientFactory.PROTOCOL.equals(protocol)
				|| AnthropicClientFactory.PROTOCOL.equals(protocol))) {
			throw new LlmConfigurationException(prefix + "deployment", "is set, but the protocol is '" + protocol + "'",
					"Set " + prefix + "protocol=azure-openai to call an Azure OpenAI deployment, or remove "
							+ prefix + "deployment.");
		}
		if (AnthropicClientFactory.PROTOCOL.equals(protocol)) {
			return new Values(anthropicVersion(prefix + "anthropic-version", endpoint.getAnthropicVersion()), null, null);
		}
		if (AzureOpenAiClientFactory.PROTOCOL.equals(protocol)) {
			azureBaseUrl(prefix + "base-url", baseUrl);
			return new Values(null, deployment(prefix + "deployment", deployment),
					apiVersion(prefix + "api-version", endpoint.getApiVersion()));
		}
		if (OpenAiClientFactory.PROTOCOL.equals(protocol)) {
			return new Values(null, null, null);
		}
		return new Values(trimmed(endpoint.getAnthropicVersion()), deployment, trimmed(endpoint.getApiVersion()));
	}

	/**
	 * Validate a base URL: absolute http(s), with a host, and no credentials, query or fragment.
	 * @param property the property, for messages
	 * @param value the value
	 * @param protocol the endpoint's protocol, for the example in messages
	 * @return the URL without a trailing slash
	 */
	static URI baseUrl(String property, @Nullable String value, String protocol) {
		String example = exampleBaseUrl(protocol);
		if (value == null || value.isBlank()) {
			throw new LlmConfigurationException(property, "is missing", "Set it to "
					+ baseUrlDescription(protocol) + ", e.g. " + property + "=" + example + ".");
		}
		try {
			URI uri = new URI(value.trim());
			// Checked first: the message below quotes the value, which must then hold no credentials.
			if (uri.getRawUserInfo() != null || uri.getRawQuery() != null || uri.getRawFragment() != null) {
				throw new LlmConfigurationException(property, "has user info, a query or a fragment",
						"Give only scheme, host, port and path; put credentials in api-key or headers.");
			}
			String scheme = uri.getScheme();
			if (scheme == null || !(scheme.equalsIgnoreCase("http") || scheme.equalsIgnoreCase("https"))
					|| uri.getHost() == null) {
				throw new LlmConfigurationException(property, "is '" + value + "', which is not an http(s) URL",
						"Use an absolute http:// or https:// URL with a host, e.g. " + example + ".");
			}
			String text = uri.toString();
			return URI.create(text.endsWith("/") ? text.substring(0, text.length() - 1) : text);
		}
		catch (URISyntaxException ex) {
			throw new LlmConfigurationException(property, "is not a valid URL (" + ex.getReason() + ")",
					"Use an absolute http:// or https:// URL, e.g. " + example + ".");
		}
	}

	/**
	 * An example base URL for a protocol, for the message about a missing or bad one.
	 * @param protocol the protocol
	 * @return the example
	 */
	static String exampleBaseUrl(String protocol) {
		if (AnthropicClientFactory.PROTOCOL.equals(protocol)) {
			return "https://api.anthropic.com/v1";
		}
		if (AzureOpenAiClientFactory.PROTOCOL.equals(protocol)) {
			return "https://my-resource.openai.azure.com";
		}
		return "https://api.openai.com/v1";
	}

	/**
	 * What a protocol's base URL is, for the message about a missing one.
	 * @param protocol the protocol
	 * @return the description
	 */
	static String baseUrlDescription(String protocol) {
		if (AnthropicClientFactory.PROTOCOL.equals(protocol)) {
			return "the Anthropic API's base URL";
		}
		if (AzureOpenAiClientFactory.PROTOCOL.equals(protocol)) {
			return "your Azure OpenAI resource's endpoint";
		}
		return "the provider's OpenAI-compatible base URL";
	}

	private static String anthropicVersion(String property, @Nullable String value) {
		String version = trimmed(value);
		if (version == null || !VERSION_DATE.matcher(version).matches()) {
			throw new LlmConfigurationException(property, (version == null) ? "is empty" : "is '" + version
					+ "', which is not an Anthropic API version",
					"Use a version date Anthropic documents, such as 2023-06-01 (the default), or remove the property.");
		}
		return version;
	}

	private static String deployment(String property, @Nullable String deployment) {
		if (deployment == null) {
			throw new LlmConfigurationException(property, "is missing",
					"Set it to the name of the model deployment in your Azure OpenAI resource (Azure AI Foundry, "
							+ "Deployments), e.g. " + property + "=gpt-4o.");
		}
		if (!DEPLOYMENT.matcher(deployment).matches()) {
			throw new LlmConfigurationException(property, "is '" + deployment + "', which is not a deployment name",
					"Use the deployment's name as Azure shows it: up to 64 letters, digits, '.', '_' and '-'.");
		}
		return deployment;
	}

	private static String apiVersion(String property, @Nullable String value) {
		String version = trimmed(value);
		if (version == null || !API_VERSION.matcher(version).matches()) {
			throw new LlmConfigurationException(property, (version == null) ? "is empty" : "is '" + version
					+ "', which is not an Azure OpenAI API version",
					"Use a version such as 2024-10-21 (the default) or 2025-01-01-preview, as Azure's API reference "
							+ "lists them.");
		}
		return version;
	}

	// The client adds /openai/deployments/<deployment>/chat/completions itself.
	private static void azureBaseUrl(String property, URI baseUrl) {
		String path = baseUrl.getPath();
		if (path != null && (path.contains("/deployments") || path.endsWith("/openai/v1"))) {
			throw new LlmConfigurationException(property, "has the path '" + path + "'",
					"For protocol azure-openai give the resource's endpoint only, e.g. " + property
							+ "=https://my-resource.openai.azure.com, and the deployment in deployment. For Azure's "
							+ "v1 API (.../openai/v1) use protocol openai instead.");
		}
	}

	private static @Nullable String trimmed(@Nullable String value) {
		return (value == null || value.isBlank()) ? null : value.trim();
	}

}
