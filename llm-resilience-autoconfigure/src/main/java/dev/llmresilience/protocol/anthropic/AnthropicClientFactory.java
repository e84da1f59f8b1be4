package dev.llmresilience.protocol.anthropic;

import java.util.Objects;
import java.util.function.Supplier;

import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.LlmClientFactory;
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

	private final FailureClassifier classifier;

	private final Supplier<WebClient.Builder> builders;

	/**
	 * Create a factory.
	 * @param classifier the classifier every client reports to
	 * @param builders a new builder (a clone of the application's) for each endpoint
	 */
	public AnthropicClientFactory(FailureClassifier classifier, Supplier<WebClient.Builder> builders) {
		this.classifier = classifier;
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
		return new AnthropicClient(settings, webClient, this.classifier, pool::dispose);
	}

}
