package dev.llmresilience.openaiapi;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The OpenAI-compatible API in a WebFlux application: functional routes that read the body up to
 * the size limit without blocking and write a stream with Spring's server-sent-event encoder.
 */
public final class WebFluxOpenAiApi {

	private final OpenAiApiHandler handler;

	/**
	 * Create the routes' handler functions.
	 * @param handler the API
	 */
	public WebFluxOpenAiApi(OpenAiApiHandler handler) {
		this.handler = handler;
	}

	/**
	 * The routes: {@code POST {basePath}/chat/completions} and {@code GET {basePath}/models}.
	 * @param basePath the path prefix, e.g. {@code /v1}
	 * @return the routes
	 */
	public RouterFunction<ServerResponse> routes(String basePath) {
		return RouterFunctions.route()
			.POST(basePath + "/chat/completions", this::chatCompletions)
			.GET(basePath + "/models", this::models)
			.build();
	}

	private Mono<ServerResponse> models(ServerRequest request) {
		String requestId = OpenAiApiHandler.requestId(header(request, ApiReplies.REQUEST_ID));
		return write(this.handler.models(header(request, HttpHeaders.AUTHORIZATION), requestId));
	}

	private Mono<ServerResponse> chatCompletions(ServerRequest request) {
		String requestId = OpenAiApiHandler.requestId(header(request, ApiReplies.REQUEST_ID));
		long max = this.handler.maxRequestSize();
		if (request.headers().contentLength().orElse(-1) > max) {
			return write(this.handler.tooLarge(requestId));
		}
		String authorization = header(request, HttpHeaders.AUTHORIZATION);
		return DataBufferUtils.join(request.bodyToFlux(DataBuffer.class), (int) Math.min(Integer.MAX_VALUE, max))
			.map(WebFluxOpenAiApi::bytes)
			.defaultIfEmpty(new byte[0])
			.flatMap((body) -> this.handler.chatCompletions(authorization, requestId, body))
			.onErrorResume(DataBufferLimitException.class, (ex) -> Mono.just(this.handler.tooLarge(requestId)))
			.flatMap(this::write);
	}

	private Mono<ServerResponse> write(OpenAiApiReply reply) {
		ServerResponse.BodyBuilder builder = ServerResponse.status(reply.status())
			.headers((headers) -> reply.headers().forEach(headers::set));
		if (reply.events() != null) {
			return builder.contentType(MediaType.TEXT_EVENT_STREAM)
				.header(HttpHeaders.CACHE_CONTROL, "no-cache")
				.body(BodyInserters.fromServerSentEvents(reply.events().map((data) -> ServerSentEvent.builder(data).build())));
		}
		return builder.contentType(MediaType.APPLICATION_JSON).bodyValue((reply.body() != null) ? reply.body() : new byte[0]);
	}

	private static byte[] bytes(DataBuffer buffer) {
		try {
			byte[] bytes = new byte[buffer.readableByteCount()];
			buffer.read(bytes);
			return bytes;
		}
		finally {
			DataBufferUtils.release(buffer);
		}
	}

	private static @Nullable String header(ServerRequest request, String name) {
		return request.headers().firstHeader(name);
	}

}
