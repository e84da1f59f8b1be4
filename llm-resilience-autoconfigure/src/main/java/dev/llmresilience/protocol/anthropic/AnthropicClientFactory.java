package dev.llmresilience.protocol.anthropic;

import java.net.URI;
import java.util.Objects;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.ClientSettings.InvalidOptionException;
import dev.llmresilience.protocol.ClientSettings.ProtocolOptions;
import dev.llmresilience.protocol.LlmClientFactory;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.UpstreamHttp;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.web.reactive.function.client.WebClient;

/**
 * Creates the clients of endpoints that speak Anthropic's Messages API ({@code protocol: anthropic}),
 * each with its own HTTP client and connection pool ({@link UpstreamHttp}), the key sent as
 * {@code x-api-key} and the endpoint's {@code anthropic-version} with every request, its one option.
 */
public final class AnthropicClientFactory implements LlmClientFactory {

	/** The protocol name of this client. */
	public static final String PROTOCOL = "anthropic";

	/** The {@code anthropic-version} sent when the settings name none. */
	public static final String DEFAULT_VERSION = "2023-06-01";

	private static final Pattern VERSION_DATE = Pattern.compile("\\d{4}-\\d{2}-\\d{2}");

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
	 * Keep the endpoint's {@code anthropic-version}, a version date; refuse a {@code deployment}.
	 * @param options what the endpoint set
	 * @param prefix the endpoint's property prefix, with its trailing dot
	 * @param baseUrl the endpoint's base URL
	 * @return its {@code anthropic-version} alone
	 * @throws InvalidOptionException when a deployment is set or the version is not a date
	 */
	@Override
	public ProtocolOptions options(ProtocolOptions options, String prefix, URI baseUrl) {
		options.refuseDeployment(prefix, PROTOCOL);
		String version = options.get(ProtocolOptions.ANTHROPIC_VERSION);
		// The key has a default, so an endpoint without one set it blank.
		if (version == null || !VERSION_DATE.matcher(version).matches()) {
			throw new InvalidOptionException(prefix + ProtocolOptions.ANTHROPIC_VERSION, (version == null) ? "is empty"
					: "is '" + version + "', which is not an Anthropic API version",
					"Use a version date Anthropic documents, such as 2023-06-01 (the default), or remove the property.");
		}
		return ProtocolOptions.of(ProtocolOptions.ANTHROPIC_VERSION, version);
	}

	/**
	 * Create the client of an endpoint with a connection pool of its own, which closing the client
	 * disposes; without an {@code anthropic-version}, it sends {@value #DEFAULT_VERSION}.
	 * @param settings the endpoint's settings
	 * @return the client
	 */
	@Override
	public AnthropicClient create(ClientSettings settings) {
		ConnectionProvider pool = UpstreamHttp.connectionProvider(settings);
		String version = Objects.requireNonNullElse(settings.options().get(ProtocolOptions.ANTHROPIC_VERSION),
				DEFAULT_VERSION);
		WebClient webClient = UpstreamHttp.webClient(settings, this.builders.get()
			.defaultHeader("anthropic-version", version), pool, (headers, key) -> headers.set("x-api-key", key));
		return new AnthropicClient(settings, webClient, this.failures, pool::dispose);
	}

}
