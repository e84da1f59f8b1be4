package dev.llmresilience.openaiapi;

import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

import org.springframework.http.codec.ServerSentEvent;

/**
 * What the OpenAI-compatible API answers one request with, independent of the web stack that
 * writes it: a status, headers, and either a JSON body or server-sent events.
 *
 * @param status the HTTP status
 * @param headers the response headers besides the content type
 * @param body the JSON body, or {@code null} for a stream
 * @param events the events of a stream (status 200), each a {@code data} line of JSON and, for the
 * Responses API, an {@code event} name; or {@code null}
 */
record OpenAiApiReply(int status, Map<String, String> headers, byte @Nullable [] body,
		@Nullable Flux<ServerSentEvent<String>> events) {

	public OpenAiApiReply {
		headers = Map.copyOf(headers);
	}

	/**
	 * Whether the reply is a stream of server-sent events.
	 * @return true for a stream
	 */
	public boolean isStream() {
		return this.events != null;
	}

}
