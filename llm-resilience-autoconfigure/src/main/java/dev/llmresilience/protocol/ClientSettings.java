package dev.llmresilience.protocol;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * What a protocol client needs to know of its endpoint: where and how to connect, and what to ask
 * for. The settings that only some protocols read are {@code null} where the endpoint's protocol
 * has no use for them. Its {@link #toString()} shows no key and no header value.
 *
 * @param name the endpoint's name, for messages
 * @param baseUrl the API's base URL
 * @param apiKey the key
 * @param model the model name sent with each request
 * @param headers extra request headers
 * @param connectTimeout TCP connect timeout
 * @param maxResponseSize largest body (or server-sent event) read, in bytes
 * @param maxConnections connections in the endpoint's pool
 * @param anthropicVersion the {@code anthropic-version} header of protocol {@code anthropic}, else {@code null}
 * @param deployment the Azure OpenAI deployment of protocol {@code azure-openai}, else {@code null}
 * @param apiVersion the Azure OpenAI {@code api-version} of protocol {@code azure-openai}, else {@code null}
 * @param maxStreamSize most bytes one streamed attempt may send in all
 * @param maxStreamEvents most server-sent events one streamed attempt may send
 * @param chatModelBean the Spring AI {@code ChatModel} bean of protocol {@code spring-ai}, else {@code null}
 */
public record ClientSettings(String name, URI baseUrl, ApiKey apiKey, String model, Map<String, String> headers,
		Duration connectTimeout, long maxResponseSize, int maxConnections, @Nullable String anthropicVersion,
		@Nullable String deployment, @Nullable String apiVersion, long maxStreamSize, long maxStreamEvents,
		@Nullable String chatModelBean) {

	/** The built-in {@code max-stream-size}: 64MB. */
	public static final long DEFAULT_MAX_STREAM_SIZE = 64L * 1024 * 1024;

	/** The built-in {@code max-stream-events}. */
	public static final long DEFAULT_MAX_STREAM_EVENTS = 200_000;

	private static final int SHORTEST_SECRET = 8;

	public ClientSettings {
		headers = Map.copyOf(headers);
	}

	/**
	 * Settings with none of the protocol-specific values, as protocol {@code openai} needs them, and the
	 * built-in stream limits.
	 * @param name the endpoint's name, for messages
	 * @param baseUrl the API's base URL
	 * @param apiKey the key
	 * @param model the model name sent with each request
	 * @param headers extra request headers
	 * @param connectTimeout TCP connect timeout
	 * @param maxResponseSize largest body (or server-sent event) read, in bytes
	 * @param maxConnections connections in the endpoint's pool
	 */
	public ClientSettings(String name, URI baseUrl, ApiKey apiKey, String model, Map<String, String> headers,
			Duration connectTimeout, long maxResponseSize, int maxConnections) {
		this(name, baseUrl, apiKey, model, headers, connectTimeout, maxResponseSize, maxConnections, null, null, null,
				DEFAULT_MAX_STREAM_SIZE, DEFAULT_MAX_STREAM_EVENTS, null);
	}

	/**
	 * What a provider's message must not repeat: the key and the header values (an organization or
	 * project id, a beta flag with a token in it). Values shorter than {@value #SHORTEST_SECRET}
	 * characters are no secrets, and redacting them would garble the message (a version such as
	 * {@code v1}).
	 * @return the values to redact from provider messages
	 */
	public List<String> secrets() {
		List<String> secrets = new ArrayList<>();
		if (this.apiKey.reveal() != null) {
			secrets.add(this.apiKey.reveal());
		}
		this.headers.values().stream().filter((value) -> value.length() >= SHORTEST_SECRET).forEach(secrets::add);
		return List.copyOf(secrets);
	}

	@Override
	public String toString() {
		return "ClientSettings[name=" + this.name + ", baseUrl=" + this.baseUrl + ", model=" + this.model + ", headers="
				+ this.headers.keySet() + "]";
	}

}
