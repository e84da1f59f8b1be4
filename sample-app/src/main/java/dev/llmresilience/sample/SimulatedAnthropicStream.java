package dev.llmresilience.sample;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import reactor.core.publisher.Flux;

import org.springframework.http.codec.ServerSentEvent;

/**
 * The simulator's streamed answers in Anthropic's events: {@code message_start},
 * {@code content_block_start} and a {@code ping}, one {@code text_delta} per word, then
 * {@code content_block_stop}, {@code message_delta} (stop reason and usage) and
 * {@code message_stop}, shaped by the provider's mode.
 */
final class SimulatedAnthropicStream {

	private static final Duration BETWEEN_CHUNKS = Duration.ofMillis(100);

	private static final Duration SLOW_FIRST_TOKEN = Duration.ofSeconds(5);

	private SimulatedAnthropicStream() {
	}

	/**
	 * The events of an answer.
	 * @param mode the provider's mode
	 * @param model the model's name
	 * @param text the whole answer
	 * @param prefix the start of the answer the client already has (a resumed stream), or empty
	 * @param cutAfter text deltas before a cut, stall or error
	 * @return the events
	 */
	static Flux<ServerSentEvent<Object>> answer(SimulatedMode mode, String model, String text, String prefix,
			int cutAfter) {
		List<String> all = SimulatedStream.words(text);
		List<String> words = all.subList(Math.min(SimulatedStream.words(prefix).size(), all.size()), all.size());
		List<String> head = words.subList(0, Math.min(cutAfter, words.size()));
		Flux<ServerSentEvent<Object>> start = Flux.just(
				event("message_start", Map.of("type", "message_start", "message", Map.of("id", "msg_sim", "type",
						"message", "role", "assistant", "model", model, "content", List.of(), "usage",
						Map.of("input_tokens", 12, "output_tokens", 1)))),
				event("content_block_start", Map.of("type", "content_block_start", "index", 0, "content_block",
						Map.of("type", "text", "text", ""))),
				event("ping", Map.of("type", "ping")));
		return switch (mode) {
			case EMPTY -> start.concatWith(end("end_turn", 0));
			case CONTENT_FILTER -> start.concatWith(end("refusal", 0));
			case SLOW -> start.concatWith(Flux.defer(() -> text(words)).delaySubscription(Duration.ofSeconds(2)))
				.concatWith(end("end_turn", words.size()));
			case SLOW_FIRST_TOKEN -> start.concatWith(text(words).delaySubscription(SLOW_FIRST_TOKEN))
				.concatWith(end("end_turn", words.size()));
			case STREAM_CUT -> start.concatWith(text(head));
			case STREAM_STALL -> start.concatWith(text(head)).concatWith(Flux.never());
			// What Anthropic sends when it is overloaded once the stream is under way.
			case STREAM_ERROR -> start.concatWith(text(head)).concatWith(Flux.just(event("error", Map.of("type", "error",
					"error", Map.of("type", "overloaded_error", "message", "Overloaded")))));
			default -> start.concatWith(text(words)).concatWith(end("end_turn", words.size()));
		};
	}

	private static Flux<ServerSentEvent<Object>> text(List<String> words) {
		return Flux.fromIterable(words)
			.delayElements(BETWEEN_CHUNKS)
			.map((word) -> event("content_block_delta", Map.of("type", "content_block_delta", "index", 0, "delta",
					Map.of("type", "text_delta", "text", word))));
	}

	private static Flux<ServerSentEvent<Object>> end(String stopReason, int outputTokens) {
		return Flux.just(event("content_block_stop", Map.of("type", "content_block_stop", "index", 0)),
				event("message_delta", Map.of("type", "message_delta", "delta", Map.of("stop_reason", stopReason),
						"usage", Map.of("output_tokens", outputTokens))),
				event("message_stop", Map.of("type", "message_stop")));
	}

	private static ServerSentEvent<Object> event(String name, Map<String, Object> data) {
		return ServerSentEvent.builder((Object) data).event(name).build();
	}

}
