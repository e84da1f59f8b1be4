package dev.llmresilience.protocol.openai;

import java.net.URI;
import java.util.function.Supplier;

import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.ClientSettings.InvalidOptionException;
import dev.llmresilience.protocol.ClientSettings.ProtocolOptions;
import dev.llmresilience.protocol.LlmClientFactory;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.UpstreamHttp;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.web.reactive.function.client.WebClient;

/**
 * Creates the clients of endpoints that speak OpenAI's Responses API
 * ({@code protocol: openai-responses}), each with its own HTTP client and connection pool
 * ({@link UpstreamHttp}) and the key sent as {@code Authorization: Bearer}, as for {@code openai}.
 * Made by {@link OpenAiClientFactory#responses}.
 */
final class OpenAiResponsesClientFactory implements LlmClientFactory {

	private final UpstreamFailures failures;

	private final Supplier<WebClient.Builder> builders;

	OpenAiResponsesClientFactory(UpstreamFailures failures, Supplier<WebClient.Builder> builders) {
		this.failures = failures;
		this.builders = builders;
	}

	@Override
	public String protocol() {
		return OpenAiClientFactory.RESPONSES_PROTOCOL;
	}

	/**
	 * Refuse a {@code deployment}, and keep no option, as for {@code openai}.
	 * @throws InvalidOptionException when a deployment is set
	 */
	@Override
	public ProtocolOptions options(ProtocolOptions options, String prefix, URI baseUrl) {
		options.refuseDeployment(prefix, OpenAiClientFactory.RESPONSES_PROTOCOL);
		return ProtocolOptions.NONE;
	}

	@Override
	public OpenAiResponsesClient create(ClientSettings settings) {
		ConnectionProvider pool = UpstreamHttp.connectionProvider(settings);
		WebClient webClient = UpstreamHttp.webClient(settings, this.builders.get(), pool,
				(headers, key) -> headers.setBearerAuth(key));
		return new OpenAiResponsesClient(settings, webClient, this.failures, pool::dispose);
	}

}
