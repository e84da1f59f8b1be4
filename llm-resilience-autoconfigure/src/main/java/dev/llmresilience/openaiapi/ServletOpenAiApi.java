package dev.llmresilience.openaiapi;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import reactor.core.publisher.Flux;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.HttpRequestHandler;

/**
 * The OpenAI-compatible API in a Servlet (Spring MVC) application. It answers on the request's
 * own thread, as the rest of such an application does: it waits for the gateway and writes each
 * event of a stream as it comes, flushing it; a client that goes away ends the stream, which
 * cancels the upstream call. A request refused on its headers is answered without reading its
 * body, and its connection closed rather than drained.
 */
final class ServletOpenAiApi implements HttpRequestHandler {

	private final OpenAiApiHandler handler;

	private final String basePath;

	/**
	 * Create the handler.
	 * @param handler the API
	 * @param basePath the path prefix, e.g. {@code /v1}, or empty for the root
	 */
	public ServletOpenAiApi(OpenAiApiHandler handler, String basePath) {
		this.handler = handler;
		this.basePath = basePath;
	}

	@Override
	public void handleRequest(HttpServletRequest request, HttpServletResponse response) throws IOException {
		String requestId = OpenAiApiHandler.requestId(request.getHeader(ApiReplies.REQUEST_ID));
		String authorization = request.getHeader(HttpHeaders.AUTHORIZATION);
		String path = request.getRequestURI().substring(request.getContextPath().length());
		if (path.equals(this.basePath + "/models") && "GET".equals(request.getMethod())) {
			write(this.handler.models(authorization, requestId), response);
			return;
		}
		boolean responses = path.equals(this.basePath + "/responses");
		if (!(responses || path.equals(this.basePath + "/chat/completions")) || !"POST".equals(request.getMethod())) {
			writeUnread(this.handler.notFound(requestId, request.getMethod(), path, this.basePath), request, response);
			return;
		}
		ChatAdmission admission = this.handler.admitChat(authorization, request.getContentLengthLong(), requestId,
				request.getHeader(OpenAiRequestReader.PRIORITY_HEADER));
		OpenAiApiReply refusal = admission.refusal();
		if (refusal != null) {
			writeUnread(refusal, request, response);
			return;
		}
		long max = this.handler.maxRequestSize();
		byte[] body;
		try {
			body = request.getInputStream().readNBytes((int) Math.min(Integer.MAX_VALUE - 1, max + 1));
		}
		finally {
			admission.bodyRead();
		}
		if (body.length > max) {
			writeUnread(this.handler.tooLarge(requestId), request, response);
			return;
		}
		OpenAiApiReply reply = (responses ? this.handler.responses(admission, body)
				: this.handler.chatCompletions(admission, body)).block();
		if (reply != null) {
			write(reply, response);
		}
	}

	/**
	 * Write an answer to a request whose body is left unread. A container that finishes a request
	 * on its own thread may drain what is left of the body first (Tomcat reads up to its
	 * {@code maxSwallowSize}, 2 MB, holding the thread while a slow client sends it); one completed
	 * asynchronously with {@code Connection: close} is closed at once instead.
	 */
	private static void writeUnread(OpenAiApiReply reply, HttpServletRequest request, HttpServletResponse response)
			throws IOException {
		if (!request.isAsyncSupported()) {
			write(reply, response);
			return;
		}
		AsyncContext async = request.startAsync();
		try {
			write(reply, response);
		}
		finally {
			async.complete();
		}
	}

	private static void write(OpenAiApiReply reply, HttpServletResponse response) throws IOException {
		response.setStatus(reply.status());
		reply.headers().forEach(response::setHeader);
		Flux<ServerSentEvent<String>> events = reply.events();
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
		try (Stream<ServerSentEvent<String>> sent = events.toStream(1)) {
			response.flushBuffer();
			for (ServerSentEvent<String> event : (Iterable<ServerSentEvent<String>>) sent::iterator) {
				// the data is one line of JSON; the name, when there is one, a constant of the API
				String name = (event.event() != null) ? "event: " + event.event() + "\n" : "";
				out.write((name + "data: " + event.data() + "\n\n").getBytes(StandardCharsets.UTF_8));
				out.flush();
			}
		}
	}

}
