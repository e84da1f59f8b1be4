package dev.llmresilience.openaiapi;

import java.util.Map;

import dev.llmresilience.chat.ChatRequest;
import org.jspecify.annotations.Nullable;

/**
 * A Responses API request that a client sent to the OpenAI-compatible API, read: the chat request
 * it maps to, and what the {@code response} object it gets back repeats of it.
 *
 * @param request the request; its {@code route} is the body's {@code model}, or {@code null} when absent
 * @param stream whether the client asked for a stream
 * @param instructions the body's {@code instructions}, sent upstream as the first system message
 * @param topP the body's {@code top_p}, or {@code null}
 * @param metadata the body's {@code metadata} as sent (the gateway's {@code priority} included)
 * @param parallelToolCalls the body's {@code parallel_tool_calls}, true when absent
 */
record ResponsesRequest(ChatRequest request, boolean stream, @Nullable String instructions, @Nullable Double topP,
		Map<String, Object> metadata, boolean parallelToolCalls) {

	ResponsesRequest {
		metadata = Map.copyOf(metadata);
	}

}
