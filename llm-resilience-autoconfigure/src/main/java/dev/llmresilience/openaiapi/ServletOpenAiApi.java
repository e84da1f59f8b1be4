package dev.llmresilience.openaiapi;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import reactor.core.publisher.Flux;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.HttpRequestHandler;

/**
 * The OpenAI-compatible API in a Servlet (Spring MVC) application. It answers on the request's
 * own thread, as the rest of such an application does: it waits for the gateway and writes each
 * event of a stream as it comes, flushing it; a client that goes away ends the stream, which
 * cancels the upstream call.
 */
public final class ServletOpenAiApi implements HttpRequestHandler {

	private final OpenAiApiHandler handler;

	/**
	 * Create the handler.
	 * @param handler the API
	 */
	public ServletOpenAiApi(OpenAiApiHandler handler) {
		this.handler = handler;
	}

	@Override
	public void handleRequest(HttpServletRequest request, HttpServletResponse response) throws IOException {
		String requestId = OpenAiApiHandler.requestId(request.getHeader(ApiReplies.REQUEST_ID));
		String authorization = request.getHeader(HttpHeaders.AUTHORIZATION);
		boolean models = request.getRequestURI().endsWith("/models");
		String expected = models ? "GET" : "POST";
		if (!expected.equals(request.getMethod())) {
			response.setHeader(HttpHeaders.ALLOW, expected);
			response.sendError(HttpServletResponse.SC_METHOD_NOT_ALLOWED);
			return;
		}
		if (models) {
			write(this.handler.models(authorization, requestId), response);
			return;
		}
		long max = this.handler.maxRequestSize();
		byte[] body = (request.getContentLengthLong() > max) ? null
				: request.getInputStream().readNBytes((int) Math.min(Integer.MAX_VALUE - 1, max + 1));
		if (body == null || body.length > max) {
			write(this.handler.tooLarge(requestId), response);
			return;
		}
		OpenAiApiReply reply = this.handler.chatCompletions(authorization, requestId, body).block();
		if (reply != null) {
			write(reply, response);
		}
	}

	private static void write(OpenAiApiReply reply, HttpServletResponse response) throws IOException {
		response.setStatus(reply.status());
		reply.headers().forEach(response::setHeader);
		Flux<String> events = reply.events();
		if (events == null) {
			response.setContentType(MediaType.APPLICATION_JSON_VALUE);
			byte[] body = (reply.body() != null) ? reply.body() : new byte[0];
			response.setContentLength(body.length);
			response.getOutputStream().write(body);
			return;
		}
		response.setContentType(MediaType.TEXT_EVENT_STREAM_VALUE);
		response.setCharacterEncoding(StandardCharsets.UTF_8.name());
		response.setHeader(HttpHeaders.CACHE_CONTROL, "no-cache");
		OutputStream out = response.getOutputStream();
		// closing the stream (normally, or on a write to a client that went away) cancels the upstream call
		try (Stream<String> data = events.toStream(1)) {
			response.flushBuffer();
			for (String event : (Iterable<String>) data::iterator) {
				out.write(("data: " + event + "\n\n").getBytes(StandardCharsets.UTF_8));
				out.flush();
			}
		}
	}

}
