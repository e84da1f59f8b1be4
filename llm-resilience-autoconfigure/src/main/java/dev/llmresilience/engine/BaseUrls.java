package dev.llmresilience.engine;

import java.net.URI;
import java.net.URISyntaxException;

import dev.llmresilience.autoconfigure.LlmConfigurationException;
import dev.llmresilience.protocol.anthropic.AnthropicClientFactory;
import dev.llmresilience.protocol.openai.AzureOpenAiClientFactory;
import org.jspecify.annotations.Nullable;

/**
 * Checks an endpoint's {@code base-url}: an absolute http(s) URL with a host and no credentials,
 * query or fragment, explained in the terms of the endpoint's protocol (its example URL). What else
 * a protocol requires of it, its factory checks with the protocol's options
 * ({@code LlmClientFactory#options}).
 */
final class BaseUrls {

	private BaseUrls() {
	}

	/**
	 * Validate a base URL: absolute http(s), with a host, and no credentials, query or fragment.
	 * @param property the property, for messages
	 * @param value the value
	 * @param protocol the endpoint's protocol, for the example in messages
	 * @return the URL without a trailing slash
	 */
	static URI check(String property, @Nullable String value, String protocol) {
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
	private static String exampleBaseUrl(String protocol) {
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
	private static String baseUrlDescription(String protocol) {
		if (AnthropicClientFactory.PROTOCOL.equals(protocol)) {
			return "the Anthropic API's base URL";
		}
		if (AzureOpenAiClientFactory.PROTOCOL.equals(protocol)) {
			return "your Azure OpenAI resource's endpoint";
		}
		return "the provider's OpenAI-compatible base URL";
	}

}
