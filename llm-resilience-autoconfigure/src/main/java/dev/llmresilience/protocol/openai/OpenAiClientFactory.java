package dev.llmresilience.protocol.openai;

import java.net.URI;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.ClientSettings.InvalidOptionException;
import dev.llmresilience.protocol.ClientSettings.ProtocolOptions;
import dev.llmresilience.protocol.LlmClientFactory;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.UpstreamHttp;
import dev.llmresilience.protocol.WireJson;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Creates the clients of OpenAI-compatible endpoints ({@code protocol: openai}), each with its own
 * HTTP client and connection pool ({@link UpstreamHttp}) and the key sent as
 * {@code Authorization: Bearer}. Other protocols that speak the same JSON (Azure OpenAI) create
 * theirs through {@link #create(ClientSettings, OpenAiDialect, BiConsumer)}.
 */
public final class OpenAiClientFactory implements LlmClientFactory {

	/** The protocol name of this client. */
	public static final String PROTOCOL = "openai";

	/** The protocol name of OpenAI's Responses API ({@link #responses}). */
	public static final String RESPONSES_PROTOCOL = "openai-responses";

	private final UpstreamFailures failures;

	private final Supplier<WebClient.Builder> builders;

	/**
	 * Create a factory whose clients start from a plain {@link WebClient#builder()}.
	 * @param failures what the provider's failures stand for
	 */
	public OpenAiClientFactory(UpstreamFailures failures) {
		this(failures, WebClient::builder);
	}

	/**
	 * Create a factory.
	 * @param failures what the provider's failures stand for
	 * @param builders a new builder (a clone of the application's) for each endpoint
	 */
	public OpenAiClientFactory(UpstreamFailures failures, Supplier<WebClient.Builder> builders) {
		this.failures = failures;
		this.builders = builders;
	}

	@Override
	public String protocol() {
		return PROTOCOL;
	}

	/**
	 * Refuse a {@code deployment}, and keep no option: the OpenAI format has none.
	 * @param options what the endpoint set
	 * @param prefix the endpoint's property prefix, with its trailing dot
	 * @param baseUrl the endpoint's base URL
	 * @return no option
	 * @throws InvalidOptionException when a deployment is set
	 */
	@Override
	public ProtocolOptions options(ProtocolOptions options, String prefix, URI baseUrl) {
		options.refuseDeployment(prefix, PROTOCOL);
		return ProtocolOptions.NONE;
	}

	/**
	 * Create the client of an endpoint with a connection pool of its own, which closing the client
	 * disposes.
	 * @param settings the endpoint's settings
	 * @return the client
	 */
	@Override
	public OpenAiChatClient create(ClientSettings settings) {
		return create(settings, OpenAiDialect.OPENAI, OpenAiClientFactory::bearer);
	}

	/**
	 * Create the client of an endpoint that speaks a variant of the OpenAI format, with a connection
	 * pool of its own, which closing the client disposes.
	 * @param settings the endpoint's settings
	 * @param dialect where requests go and what their body carries
	 * @param credentials sets the authentication headers from the key
	 * @return the client
	 */
	public OpenAiChatClient create(ClientSettings settings, OpenAiDialect dialect,
			BiConsumer<HttpHeaders, String> credentials) {
		ConnectionProvider pool = UpstreamHttp.connectionProvider(settings);
		WebClient webClient = UpstreamHttp.webClient(settings, this.builders.get(), pool, credentials);
		return new OpenAiChatClient(settings, webClient, WireJson.mapper(), this.failures, dialect)
			.onClose(pool::dispose);
	}

	/**
	 * Create the client of an endpoint.
	 * @param settings the endpoint's settings
	 * @param builder a builder the factory may change (pass a clone of a shared one)
	 * @param connections the endpoint's connection pool, which the caller disposes
	 * @return the client
	 */
	public OpenAiChatClient create(ClientSettings settings, WebClient.Builder builder, ConnectionProvider connections) {
		WebClient webClient = UpstreamHttp.webClient(settings, builder, connections, OpenAiClientFactory::bearer);
		return new OpenAiChatClient(settings, webClient, WireJson.mapper(), this.failures);
	}

	/**
	 * The factory of {@code protocol: openai-responses}: endpoints called at
	 * {@code POST {base-url}/responses}, OpenAI's Responses API (for models served only there), with
	 * the key, headers, connection pool and failure rules of {@code openai}.
	 * @param failures what the provider's failures stand for
	 * @param builders a new builder (a clone of the application's) for each endpoint
	 * @return the factory
	 */
	public static LlmClientFactory responses(UpstreamFailures failures, Supplier<WebClient.Builder> builders) {
		return new OpenAiResponsesClientFactory(failures, builders);
	}

	/**
	 * A connection pool for an endpoint (see {@link UpstreamHttp#connectionProvider}).
	 * @param settings the endpoint's settings
	 * @return the pool; dispose it when the endpoint is closed
	 */
	public static ConnectionProvider connectionProvider(ClientSettings settings) {
		return UpstreamHttp.connectionProvider(settings);
	}

	private static void bearer(HttpHeaders headers, String key) {
		headers.setBearerAuth(key);
	}

}
