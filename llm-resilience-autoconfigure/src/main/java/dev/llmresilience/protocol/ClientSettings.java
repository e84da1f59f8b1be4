package dev.llmresilience.protocol;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What a protocol client needs to know of its endpoint: where and how to connect, and what to ask
 * for. Its {@link #toString()} shows no key and no header value.
 *
 * @param name the endpoint's name, for messages
 * @param baseUrl the API's base URL
 * @param apiKey the key
 * @param model the model name sent with each request
 * @param headers extra request headers
 * @param connectTimeout TCP connect timeout
 * @param maxResponseSize largest body (or server-sent event) read, in bytes
 * @param maxConnections connections in the endpoint's pool
 * @param chatModelBean for {@code protocol: spring-ai}, the name of the Spring AI {@code ChatModel}
 * bean that serves the endpoint; else {@code null}
 */
public record ClientSettings(String name, URI baseUrl, ApiKey apiKey, String model, Map<String, String> headers,
		Duration connectTimeout, long maxResponseSize, int maxConnections, @Nullable String chatModelBean) {

	public ClientSettings {
		headers = Map.copyOf(headers);
	}

	/**
	 * Settings of an endpoint that no protocol-specific setting concerns.
	 * @param name the endpoint's name
	 * @param baseUrl the API's base URL
	 * @param apiKey the key
	 * @param model the model name
	 * @param headers extra request headers
	 * @param connectTimeout TCP connect timeout
	 * @param maxResponseSize largest body read, in bytes
	 * @param maxConnections connections in the endpoint's pool
	 */
	public ClientSettings(String name, URI baseUrl, ApiKey apiKey, String model, Map<String, String> headers,
			Duration connectTimeout, long maxResponseSize, int maxConnections) {
		this(name, baseUrl, apiKey, model, headers, connectTimeout, maxResponseSize, maxConnections, null);
	}

	@Override
	public String toString() {
		return "ClientSettings[name=" + this.name + ", baseUrl=" + this.baseUrl + ", model=" + this.model + ", headers="
				+ this.headers.keySet() + "]";
	}

}
