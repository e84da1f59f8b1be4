package dev.llmresilience.openaiapi;

import java.util.function.BiFunction;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The OpenAI-compatible API in a WebFlux application: functional routes that decide on a request
 * from its headers first, read the body up to the size limit without blocking and write a stream
 * with Spring's server-sent-event encoder. A request refused on its headers is answered at once and
 * its connection closed, its body never subscribed to.
 */
final class WebFluxOpenAiApi {

	private final OpenAiApiHandler handler;

	/**
	 * Create the routes' handler functions.
	 * @param handler the API
	 */
	public WebFluxOpenAiApi(OpenAiApiHandler handler) {
		this.handler = handler;
	}

	/**
	 * The routes: {@code POST {basePath}/chat/completions}, {@code POST {basePath}/responses},
	 * {@code GET {basePath}/models}, and an OpenAI-shaped 404 for any other method or path under a
	 * base path that is not the root (at the root it would take every path of the application).
	 * @param basePath the path prefix, e.g. {@code /v1}, or empty for the root
	 * @return the routes
	 */
	public RouterFunction<ServerResponse> routes(String basePath) {
		RouterFunctions.Builder routes = RouterFunctions.route()
			.POST(basePath + "/chat/completions", (request) -> admitted(request, this.handler::chatCompletions))
			.POST(basePath + "/responses", (request) -> admitted(request, this.handler::responses))
			.GET(basePath + "/models", this::models);
		if (!basePath.isEmpty()) {
			routes.route(RequestPredicates.path(basePath + "/**"), (request) -> write(this.handler.notFound(
					requestId(request), request.method().name(), request.path(), basePath)));
		}
		return routes.build();
	}

	private Mono<ServerResponse> models(ServerRequest request) {
		return write(this.handler.models(header(request, HttpHeaders.AUTHORIZATION), requestId(request)));
	}

	/** Decide on the request from its headers, then read its body and answer it with {@code answer}. */
	private Mono<ServerResponse> admitted(ServerRequest request,
			BiFunction<ChatAdmission, byte[], Mono<OpenAiApiReply>> answer) {
		String requestId = requestId(request);
		ChatAdmission admission = this.handler.admitChat(header(request, HttpHeaders.AUTHORIZATION),
				request.headers().contentLength().orElse(-1), requestId,
				header(request, OpenAiRequestReader.PRIORITY_HEADER));
		OpenAiApiReply refusal = admission.refusal();
		if (refusal != null) {
			return write(refusal);
		}
		int max = (int) Math.min(Integer.MAX_VALUE, this.handler.maxRequestSize());
		return DataBufferUtils.join(request.bodyToFlux(DataBuffer.class), max)
			.map(WebFluxOpenAiApi::bytes)
			// the permit goes back once the body is read, before it is answered; or when reading fails
			.doOnNext((body) -> admission.bodyRead())
			.doFinally((signal) -> admission.bodyRead())
			.defaultIfEmpty(new byte[0])
			.flatMap((body) -> answer.apply(admission, body))
			.onErrorResume(DataBufferLimitException.class, (ex) -> Mono.just(this.handler.tooLarge(requestId)))
			.flatMap(this::write);
	}

	private static String requestId(ServerRequest request) {
		return OpenAiApiHandler.requestId(header(request, ApiReplies.REQUEST_ID));
	}

	private Mono<ServerResponse> write(OpenAiApiReply reply) {
		ServerResponse.BodyBuilder builder = ServerResponse.status(reply.status())
			.headers((headers) -> reply.headers().forEach(headers::set));
		if (reply.events() != null) {
			return builder.contentType(MediaType.TEXT_EVENT_STREAM)
				.header(HttpHeaders.CACHE_CONTROL, "no-cache")
				.body(BodyInserters.fromServerSentEvents(reply.events()));
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
