package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * What an application writes without the starter: a plain {@link WebClient} that posts a chat
 * request and reads the completion with Spring's Jackson codecs. It does the same JSON work as the
 * gateway's client (encode the request, decode the response), and nothing else.
 */
final class RawClient {

	private static final ChatCompletionRequest REQUEST = new ChatCompletionRequest("stub-model",
			List.of(new Message("user", "Hello")));

	private final WebClient webClient;

	/**
	 * Create a client.
	 * @param baseUrl the provider's base URL
	 * @param pool its connection pool
	 */
	RawClient(String baseUrl, ConnectionProvider pool) {
		this.webClient = WebClient.builder()
			.baseUrl(baseUrl)
			.clientConnector(new ReactorClientHttpConnector(HttpClient.create(pool)))
			.defaultHeaders((headers) -> headers.setBearerAuth("sk-bench"))
			.build();
	}

	/**
	 * A pool as large as the given number of connections, with an unbounded queue.
	 * @param name the pool's name
	 * @param connections the connections
	 * @return the pool
	 */
	static ConnectionProvider pool(String name, int connections) {
		return ConnectionProvider.builder(name)
			.maxConnections(connections)
			.pendingAcquireMaxCount(-1)
			.pendingAcquireTimeout(Duration.ofSeconds(60))
			.build();
	}

	/**
	 * One call.
	 * @return the completion's text (an error for a non-2xx status)
	 */
	Mono<String> chat() {
		return this.webClient.post()
			.uri("/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.APPLICATION_JSON)
			.bodyValue(REQUEST)
			.retrieve()
			.bodyToMono(ChatCompletion.class)
			.map((completion) -> completion.choices().get(0).message().content());
	}

	record ChatCompletionRequest(String model, List<Message> messages) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record Message(String role, String content) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record Choice(Message message) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record ChatCompletion(String model, List<Choice> choices) {
	}

}
