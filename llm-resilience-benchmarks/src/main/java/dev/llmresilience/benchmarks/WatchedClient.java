package dev.llmresilience.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The primary's transport in the outage replay: the real client, with a note of each call that got
 * past the endpoint's breaker and bulkhead onto the wire, the breaker's state then, and whether it
 * was one of the library's own probes or a user's request. Both {@link #chat} and {@link #stream}
 * are watched (with {@code upstream-streaming} on, users' chat calls go upstream as streams).
 */
final class WatchedClient implements LlmClient {

	/**
	 * One call put on the wire.
	 * @param at when, on {@link System#nanoTime()}'s clock
	 * @param state the breaker's state then
	 * @param probe whether it was a synthetic probe (one user message {@code Hi}, max tokens 1)
	 */
	record Send(long at, CircuitBreaker.State state, boolean probe) {
	}

	private final LlmClient client;

	private final Supplier<CircuitBreaker> breaker;

	private final List<Send> sends = new ArrayList<>();

	WatchedClient(LlmClient client, Supplier<CircuitBreaker> breaker) {
		this.client = client;
		this.breaker = breaker;
	}

	@Override
	public Mono<Completion> chat(ChatRequest request) {
		return Mono.defer(() -> {
			note(request);
			return this.client.chat(request);
		});
	}

	@Override
	public Flux<CompletionDelta> stream(ChatRequest request) {
		return Flux.defer(() -> {
			note(request);
			return this.client.stream(request);
		});
	}

	@Override
	public boolean supportsStreaming() {
		return this.client.supportsStreaming();
	}

	/** The library's probe request (SyntheticProbes.REQUEST), which users' requests here never look like. */
	static boolean isProbe(ChatRequest request) {
		return request.maxTokens() != null && request.maxTokens() == 1 && request.messages().size() == 1
				&& "Hi".equals(request.messages().get(0).content());
	}

	private void note(ChatRequest request) {
		Send send = new Send(System.nanoTime(), this.breaker.get().getState(), isProbe(request));
		synchronized (this.sends) {
			this.sends.add(send);
		}
	}

	CircuitBreaker breaker() {
		return this.breaker.get();
	}

	List<Send> sends() {
		synchronized (this.sends) {
			return List.copyOf(this.sends);
		}
	}

}
