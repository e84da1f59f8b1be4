package dev.llmresilience.protocol;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.function.BiConsumer;

import io.netty.channel.ChannelOption;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The HTTP plumbing every protocol's client shares. The client is built from the application's
 * {@link WebClient.Builder}, so that Boot's codecs, observations and customizers apply, with what an
 * LLM call needs on top: the endpoint's connect timeout, no redirects (a key must never follow one
 * to another host), none of Reactor Netty's own retries (the endpoint's retry is the one place that
 * decides), a connection pool sized to the bulkhead, a cap on the body size, and no logging of
 * request details (headers, so the key), whatever the application's codecs say. Bodies are read as
 * bytes ({@link #body}) and events split by {@link SseEvents}, never by Spring's logging decoders.
 */
public final class UpstreamHttp {

	private UpstreamHttp() {
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

	/**
	 * The web client of an endpoint: its base URL, its extra headers, then its credentials.
	 * @param settings the endpoint's settings
	 * @param builder a builder this may change (pass a clone of a shared one)
	 * @param connections the endpoint's connection pool
	 * @param credentials sets the protocol's authentication headers from the key (called only when a
	 * key is set)
	 * @return the client
	 */
	public static WebClient webClient(ClientSettings settings, WebClient.Builder builder,
			ConnectionProvider connections, BiConsumer<HttpHeaders, String> credentials) {
		HttpClient httpClient = HttpClient.create(connections)
			.option(ChannelOption.CONNECT_TIMEOUT_MILLIS,
					(int) Math.min(Integer.MAX_VALUE, settings.connectTimeout().toMillis()))
			.followRedirect(false)
			.disableRetry(true);
		int maxBody = (int) Math.min(Integer.MAX_VALUE, settings.limits().maxResponseSize());
		return builder.baseUrl(settings.baseUrl().toString())
			.clientConnector(new ReactorClientHttpConnector(httpClient))
			.codecs((codecs) -> {
				codecs.defaultCodecs().maxInMemorySize(maxBody);
				// Boot's spring.http.codecs.log-request-details would have the exchange log the Authorization header
				codecs.defaultCodecs().enableLoggingRequestDetails(false);
			})
			.defaultHeaders((headers) -> {
				settings.headers().forEach(headers::set);
				String key = settings.apiKey().reveal();
				if (key != null) {
					credentials.accept(headers, key);
				}
			})
			.build();
	}

	/**
	 * The whole body of a response as text, empty when there is none. Read as bytes: Spring's text
	 * decoder logs what it decodes at DEBUG, and a provider's body may repeat the key. JSON is UTF-8
	 * (RFC 8259) unless the response says otherwise.
	 * @param response the response
	 * @return the body, up to the endpoint's {@code max-response-size}
	 */
	public static Mono<String> body(ClientResponse response) {
		MediaType type = response.headers().asHttpHeaders().getContentType();
		Charset charset = (type != null && type.getCharset() != null) ? type.getCharset() : StandardCharsets.UTF_8;
		return response.bodyToMono(byte[].class).map((bytes) -> new String(bytes, charset)).defaultIfEmpty("");
	}

	/**
	 * A JSON request body posted to a provider, as every protocol's chat (answer as JSON) and stream
	 * (answer as server-sent events, or as JSON from a server that does not stream) sends it.
	 * @param client the endpoint's client
	 * @param path the path below the endpoint's base URL
	 * @param body the JSON body
	 * @param streamed whether the answer is asked for as a stream
	 * @return the request, ready to exchange
	 */
	public static WebClient.RequestHeadersSpec<?> post(WebClient client, String path, byte[] body, boolean streamed) {
		WebClient.RequestBodySpec request = client.post().uri(path).contentType(MediaType.APPLICATION_JSON);
		WebClient.RequestBodySpec accepting = streamed
				? request.accept(MediaType.TEXT_EVENT_STREAM, MediaType.APPLICATION_JSON)
				: request.accept(MediaType.APPLICATION_JSON);
		return accepting.bodyValue(body);
	}

	/**
	 * Read a whole response and hand its status, headers and body (as {@link #body} reads it) to the
	 * protocol's reading of an answer: the step every protocol's plain (not streamed) call shares.
	 * @param response the response
	 * @param reader reads the answer, or throws the failure it stands for
	 * @param <T> what the reader makes of it
	 * @return what the reader made of it
	 */
	public static <T> Mono<T> read(ClientResponse response, AnswerReader<T> reader) {
		int status = response.statusCode().value();
		HttpHeaders headers = response.headers().asHttpHeaders();
		return body(response).map((body) -> reader.read(status, headers, body));
	}

	/**
	 * A protocol's reading of a whole response.
	 * @param <T> what it makes of it
	 */
	@FunctionalInterface
	public interface AnswerReader<T> {

		/**
		 * Read an answer.
		 * @param status the HTTP status
		 * @param headers the response's headers
		 * @param body the body, empty when there is none
		 * @return what the body says
		 */
		T read(int status, HttpHeaders headers, String body);

	}

	/**
	 * Whether a response to a streamed request is a stream of server-sent events. A response with
	 * no content type is taken for one; anything else (a JSON answer from a server that ignored the
	 * request to stream, or an error) is read whole.
	 * @param response the response
	 * @return true to read it event by event
	 */
	public static boolean isEventStream(ClientResponse response) {
		MediaType type = response.headers().asHttpHeaders().getContentType();
		// no content type at all is read as the plain answer a server that ignored "stream" sends
		return response.statusCode().is2xxSuccessful() && type != null && MediaType.TEXT_EVENT_STREAM.isCompatibleWith(type);
	}

}
