package dev.llmresilience.openaiapi;

import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * What the OpenAI-compatible API answers one request with, independent of the web stack that
 * writes it: a status, headers, and either a JSON body or the {@code data} of server-sent events.
 *
 * @param status the HTTP status
 * @param headers the response headers besides the content type
 * @param body the JSON body, or {@code null} for a stream
 * @param events the {@code data} of each event of a stream (status 200), or {@code null}
 */
record OpenAiApiReply(int status, Map<String, String> headers, byte @Nullable [] body,
		@Nullable Flux<String> events) {

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
