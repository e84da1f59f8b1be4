package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * What an application writes without the starter: a plain {@link WebClient} that posts a chat
 * request and reads the completion with Spring's Jackson codecs. It does the same JSON work as the
 * gateway's client (encode the request, decode the response), and nothing else. {@link #stream()}
 * asks for the same answer as server-sent events, as the gateway's {@code chat} does by default
 * (upstream streaming), and reads them the way Spring's SSE decoding hands them out.
 */
final class RawClient {

	private static final ChatCompletionRequest REQUEST = new ChatCompletionRequest("stub-model",
			List.of(new Message("user", "Hello")));

	private static final ChatCompletionRequest STREAM_REQUEST = new ChatCompletionRequest("stub-model",
			List.of(new Message("user", "Hello")), true, new StreamOptions(true));

	private static final String DONE = "[DONE]";

	private static final JsonMapper JSON = JsonMapper.builder().build();

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

	/**
	 * One call asked for as a stream: each event's {@code data} as Spring's server-sent-event reader
	 * decodes it, each chunk parsed with Jackson, the content pieces joined, the {@code [DONE]} event
	 * skipped.
	 * @param stopAtDone true to stop reading at {@code [DONE]}, as Spring AI's own WebClient-based
	 * OpenAI client did ({@code takeUntil}) and as the gateway's stream reader does: that cancels
	 * the response before its last (empty) HTTP chunk is read, so Reactor Netty closes the
	 * connection instead of returning it to the pool; false to read the body to its end, so that
	 * the connection is kept
	 * @return the completion's text (an error for a non-2xx status)
	 */
	Mono<String> stream(boolean stopAtDone) {
		Flux<String> events = this.webClient.post()
			.uri("/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.bodyValue(STREAM_REQUEST)
			.retrieve()
			.bodyToFlux(String.class);
		return (stopAtDone ? events.takeUntil(DONE::equals) : events).filter((data) -> !DONE.equals(data))
			.map((data) -> JSON.readValue(data, ChatCompletionChunk.class))
			.reduceWith(StringBuilder::new, (text, chunk) -> {
				for (ChunkChoice choice : chunk.choices()) {
					if (choice.delta() != null && choice.delta().content() != null) {
						text.append(choice.delta().content());
					}
				}
				return text;
			})
			.map(StringBuilder::toString);
	}

	/**
	 * One call asked for as a stream, with the given prompt, its content pieces handed out one by
	 * one as they arrive: each event's {@code data} as Spring's server-sent-event reader decodes it,
	 * parsed with Jackson, read to the end of the body ({@code [DONE]} skipped).
	 * @param prompt the user message
	 * @return each chunk's content (empty for a chunk with none)
	 */
	Flux<String> contents(String prompt) {
		return this.webClient.post()
			.uri("/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.TEXT_EVENT_STREAM)
			.bodyValue(new ChatCompletionRequest("stub-model", List.of(new Message("user", prompt)), true,
					new StreamOptions(true)))
			.retrieve()
			.bodyToFlux(String.class)
			.filter((data) -> !DONE.equals(data))
			.map((data) -> {
				StringBuilder text = new StringBuilder();
				for (ChunkChoice choice : JSON.readValue(data, ChatCompletionChunk.class).choices()) {
					if (choice.delta() != null && choice.delta().content() != null) {
						text.append(choice.delta().content());
					}
				}
				return text.toString();
			});
	}

	@JsonInclude(JsonInclude.Include.NON_NULL)
	record ChatCompletionRequest(String model, List<Message> messages, @Nullable Boolean stream,
			@JsonProperty("stream_options") @Nullable StreamOptions streamOptions) {

		ChatCompletionRequest(String model, List<Message> messages) {
			this(model, messages, null, null);
		}

	}

	record StreamOptions(@JsonProperty("include_usage") boolean includeUsage) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record ChunkChoice(@Nullable Delta delta) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record Delta(@Nullable String content) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record ChatCompletionChunk(List<ChunkChoice> choices) {
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
