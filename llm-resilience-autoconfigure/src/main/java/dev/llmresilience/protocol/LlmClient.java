package dev.llmresilience.protocol;

import dev.llmresilience.chat.ChatRequest;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Sends one attempt of a chat request to one endpoint. Implementations make exactly one HTTP call
 * per subscription and never retry: retries belong to the endpoint's Resilience4j retry. Failures
 * are signalled as classified {@link dev.llmresilience.failure.LlmException}s where the response
 * tells what happened, or as the transport's own error otherwise.
 */
@FunctionalInterface
public interface LlmClient {

	/**
	 * Make one attempt.
	 * @param request the request
	 * @return the completion; a usable one only (an empty answer is an error)
	 */
	Mono<Completion> chat(ChatRequest request);

	/**
	 * Make one streamed attempt. The flux completes only when the provider said the answer is done;
	 * a body that ends before that is an error. Timeouts are not the client's business: the endpoint
	 * applies its {@code first-token-timeout} and {@code stream-idle-timeout}.
	 * @param request the request
	 * @return every chunk the provider sent, including those with no text (the role chunk, the finish
	 * reason, the usage); clients that cannot stream fail with {@link UnsupportedOperationException}
	 */
	default Flux<CompletionDelta> stream(ChatRequest request) {
		return Flux.error(new UnsupportedOperationException(getClass().getName() + " cannot stream"));
	}

	/**
	 * Whether {@link #stream} works. The endpoint sends every call upstream as a stream when it
	 * does (and {@code upstream-streaming} is on), so that the first-token timeout bounds it, and
	 * answers a stream from {@link #chat} in one chunk when it does not. By default, whether the
	 * client's class implements {@link #stream} itself, found by reflection: in a native image that
	 * takes a reflection hint for the client's class, so a client of your own there should override
	 * this instead (docs/native.md).
	 * @return true when the client streams
	 */
	default boolean supportsStreaming() {
		try {
			return getClass().getMethod("stream", ChatRequest.class).getDeclaringClass() != LlmClient.class;
		}
		catch (NoSuchMethodException ex) {
			return false;
		}
	}

}
