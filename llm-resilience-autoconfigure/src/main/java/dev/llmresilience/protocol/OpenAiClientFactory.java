package dev.llmresilience.protocol;

import java.util.function.Supplier;

import dev.llmresilience.failure.FailureClassifier;
import io.netty.channel.ChannelOption;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Builds the HTTP client of an OpenAI-compatible endpoint from the application's
 * {@link WebClient.Builder}, so that Boot's codecs, observations and customizers apply, and sets
 * what an LLM call needs on top: the endpoint's connect timeout, no redirects (a key must never
 * follow one to another host), none of Reactor Netty's own retries (the endpoint's retry is the one
 * place that decides), a connection pool sized to the bulkhead, and a cap on the body size.
 */
public final class OpenAiClientFactory implements LlmClientFactory {

	/** The protocol name of this client. */
	public static final String PROTOCOL = "openai";

	private final JsonMapper mapper = JsonMapper.builder()
		.disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
		.disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
		.build();

	private final FailureClassifier classifier;

	private final Supplier<WebClient.Builder> builders;

	/**
	 * Create a factory whose clients start from a plain {@link WebClient#builder()}.
	 * @param classifier the classifier every client reports to
	 */
	public OpenAiClientFactory(FailureClassifier classifier) {
		this(classifier, WebClient::builder);
	}

	/**
	 * Create a factory.
	 * @param classifier the classifier every client reports to
	 * @param builders a new builder (a clone of the application's) for each endpoint
	 */
	public OpenAiClientFactory(FailureClassifier classifier, Supplier<WebClient.Builder> builders) {
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
	public OpenAiChatClient create(ClientSettings settings) {
		ConnectionProvider pool = connectionProvider(settings);
		return create(settings, this.builders.get(), pool).onClose(pool::dispose);
	}

	/**
	 * Create the client of an endpoint.
	 * @param settings the endpoint's settings
	 * @param builder a builder the factory may change (pass a clone of a shared one)
	 * @param connections the endpoint's connection pool, which the caller disposes
	 * @return the client
	 */
	public OpenAiChatClient create(ClientSettings settings, WebClient.Builder builder, ConnectionProvider connections) {
		HttpClient httpClient = HttpClient.create(connections)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis()))
			.followRedirect(false)
			.disableRetry(true);
		int maxBody = (int) Math.min(Integer.MAX_VALUE, settings.maxResponseSize());
		WebClient webClient = builder.baseUrl(settings.baseUrl().toString())
			.clientConnector(new ReactorClientHttpConnector(httpClient))
			.codecs((codecs) -> codecs.defaultCodecs().maxInMemorySize(maxBody))
			.defaultHeaders((headers) -> {
				settings.headers().forEach(headers::set);
				String key = settings.apiKey().reveal();
				if (key != null) {
					headers.setBearerAuth(key);
				}
			})
			.build();
		return new OpenAiChatClient(settings, webClient, this.mapper, this.classifier);
	}

	/**
	 * A connection pool for an endpoint: as many connections as its bulkhead lets calls through, and
	 * no waiting queue beyond them, so that a call never waits for a connection unseen.
	 * @param settings the endpoint's settings
	 * @return the pool; dispose it when the endpoint is closed
	 */
	public static ConnectionProvider connectionProvider(ClientSettings settings) {
		return ConnectionProvider.builder("llm-" + settings.name())
			.maxConnections(Math.max(1, settings.maxConnections()))
			.pendingAcquireTimeout(settings.connectTimeout())
			.build();
	}

}
