package dev.llmresilience.protocol;

import dev.llmresilience.gateway.ChatRequest;
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

}
