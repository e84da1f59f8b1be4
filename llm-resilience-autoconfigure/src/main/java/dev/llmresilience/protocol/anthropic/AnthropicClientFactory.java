package dev.llmresilience.protocol.anthropic;

import java.util.Objects;
import java.util.function.Supplier;

import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.LlmClientFactory;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.UpstreamHttp;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.web.reactive.function.client.WebClient;

/**
 * Creates the clients of endpoints that speak Anthropic's Messages API ({@code protocol: anthropic}),
 * each with its own HTTP client and connection pool ({@link UpstreamHttp}), the key sent as
 * {@code x-api-key} and the endpoint's {@code anthropic-version} with every request.
 */
public final class AnthropicClientFactory implements LlmClientFactory {

	/** The protocol name of this client. */
	public static final String PROTOCOL = "anthropic";

	/** The {@code anthropic-version} sent when the settings name none. */
	public static final String DEFAULT_VERSION = "2023-06-01";

	private final UpstreamFailures failures;

	private final Supplier<WebClient.Builder> builders;

	/**
	 * Create a factory.
	 * @param failures what the provider's failures stand for
	 * @param builders a new builder (a clone of the application's) for each endpoint
	 */
	public AnthropicClientFactory(UpstreamFailures failures, Supplier<WebClient.Builder> builders) {
		this.failures = failures;
		this.builders = builders;
	}

	@Override
	public String protocol() {
		return PROTOCOL;
	}

	/**
	 * Create the client of an endpoint with a connection pool of its own, which closing the client
	 * disposes.
	 * @param settings the endpoint's settings
	 * @return the client
	 */
	@Override
	public AnthropicClient create(ClientSettings settings) {
		ConnectionProvider pool = UpstreamHttp.connectionProvider(settings);
		String version = Objects.requireNonNullElse(settings.anthropicVersion(), DEFAULT_VERSION);
		WebClient webClient = UpstreamHttp.webClient(settings, this.builders.get()
			.defaultHeader("anthropic-version", version), pool, (headers, key) -> headers.set("x-api-key", key));
		return new AnthropicClient(settings, webClient, this.failures, pool::dispose);
	}

}
