package dev.llmresilience.protocol;

import java.net.URI;
import java.time.Duration;
import java.util.Map;

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
 * @param maxStreamSize most bytes one streamed attempt may send in all
 * @param maxStreamEvents most server-sent events one streamed attempt may send
 * @param maxConnections connections in the endpoint's pool
 */
public record ClientSettings(String name, URI baseUrl, ApiKey apiKey, String model, Map<String, String> headers,
		Duration connectTimeout, long maxResponseSize, long maxStreamSize, long maxStreamEvents, int maxConnections) {

	public ClientSettings {
		headers = Map.copyOf(headers);
	}

	@Override
	public String toString() {
		return "ClientSettings[name=" + this.name + ", baseUrl=" + this.baseUrl + ", model=" + this.model + ", headers="
				+ this.headers.keySet() + "]";
	}

}
