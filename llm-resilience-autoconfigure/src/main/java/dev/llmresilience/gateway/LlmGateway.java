package dev.llmresilience.gateway;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Calls the language models of a route and degrades, in order, to another model, to later, and
 * to a fast, honest "busy" answer when they fail.
 */
public interface LlmGateway {

	/**
	 * Answer a request.
	 * @param request the request
	 * @return the response; errors only with an {@link dev.llmresilience.failure.LlmRequestException}
	 * (the request itself is wrong) or, with {@code llm.gateway.busy-as-error=true}, an
	 * {@link dev.llmresilience.failure.LlmUnavailableException}
	 */
	Mono<ChatResponse> chat(ChatRequest request);

	/**
	 * Answer a request as a stream of chunks (server-sent events upstream). Until the first chunk,
	 * failures are retried and fall back as in {@link #chat(ChatRequest)}, unseen; after it the
	 * stream is never restarted. The request's {@code timeout} does not apply: each endpoint's
	 * {@code first-token-timeout} and {@code stream-idle-timeout} do.
	 * @param request the request
	 * @return the chunks, the last one with the finish reason and usage; a single
	 * {@link Tier#BUSY} chunk when no endpoint could start. Errors with an
	 * {@link dev.llmresilience.failure.LlmStreamInterruptedException} (carrying the partial text)
	 * when the stream breaks after its first chunk, unless {@code llm.gateway.stream.resume-on-fallback}
	 * continues it on the next endpoint; with an {@link dev.llmresilience.failure.LlmRequestException}
	 * or an {@link dev.llmresilience.failure.LlmUnavailableException} as {@link #chat(ChatRequest)} does
	 */
	Flux<ChatChunk> stream(ChatRequest request);

	/**
	 * The state of a deferred request.
	 * @param ticket the ticket of a {@link Tier#DEFERRED} response
	 * @return its state, or empty for an unknown ticket
	 */
	Mono<DeferredResult> deferred(String ticket);

	/**
	 * Answer one user prompt on the default route.
	 * @param userPrompt the prompt
	 * @return the response
	 */
	default Mono<ChatResponse> chat(String userPrompt) {
		return chat(ChatRequest.ofUser(userPrompt));
	}

}
