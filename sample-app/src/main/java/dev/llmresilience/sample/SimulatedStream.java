package dev.llmresilience.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

import org.springframework.http.codec.ServerSentEvent;

/**
 * The simulator's streamed answers in the OpenAI format (Azure's too): {@code chat.completion.chunk}
 * events, one word at a time, then the finish reason, the usage and {@code [DONE]}, shaped by the
 * provider's mode.
 */
final class SimulatedStream {

	private static final Duration BETWEEN_CHUNKS = Duration.ofMillis(100);

	private static final Duration SLOW_FIRST_TOKEN = Duration.ofSeconds(5);

	private SimulatedStream() {
	}

	/**
	 * The events of an answer.
	 * @param mode the provider's mode
	 * @param model the model's name
	 * @param text the whole answer
	 * @param prefix the start of the answer the client already has (a resumed stream), or empty: the
	 * answer then skips as many words as the prefix has
	 * @param cutAfter content chunks before a cut or stall
	 * @return the events
	 */
	static Flux<ServerSentEvent<Object>> answer(SimulatedMode mode, String model, String text, String prefix,
			int cutAfter) {
		List<String> all = words(text);
		List<String> words = all.subList(Math.min(words(prefix).size(), all.size()), all.size());
		Flux<ServerSentEvent<Object>> role = Flux.just(chunk(model, Map.of("role", "assistant", "content", ""), null));
		return switch (mode) {
			case EMPTY -> role.concatWith(end(model, "stop", 0));
			case CONTENT_FILTER -> role.concatWith(end(model, "content_filter", 0));
			case SLOW -> role.concatWith(Flux.defer(() -> content(model, words)).delaySubscription(Duration.ofSeconds(2)))
				.concatWith(end(model, "stop", words.size()));
			case SLOW_FIRST_TOKEN -> role.concatWith(content(model, words).delaySubscription(SLOW_FIRST_TOKEN))
				.concatWith(end(model, "stop", words.size()));
			// The body just stops: no finish reason, no [DONE], as when a proxy drops a stream.
			case STREAM_CUT -> role.concatWith(content(model, words.subList(0, Math.min(cutAfter, words.size()))));
			case STREAM_STALL -> role.concatWith(content(model, words.subList(0, Math.min(cutAfter, words.size()))))
				.concatWith(Flux.never());
			// An error sent in-band, as OpenAI-compatible servers report a failure once the stream is under way.
			case STREAM_ERROR -> role.concatWith(content(model, words.subList(0, Math.min(cutAfter, words.size()))))
				.concatWith(Flux.just(ServerSentEvent.builder((Object) Map.of("error", Map.of("message",
						"The server had an error while processing your request", "type", "server_error"))).build()));
			default -> role.concatWith(content(model, words)).concatWith(end(model, "stop", words.size()));
		};
	}

	// "[primary] You said: Hello" -> "[primary] ", "You ", "said: ", "Hello"
	static List<String> words(String text) {
		List<String> words = new ArrayList<>();
		for (String word : text.split("(?<= )")) {
			if (!word.isEmpty()) {
				words.add(word);
			}
		}
		return words;
	}

	private static Flux<ServerSentEvent<Object>> content(String model, List<String> words) {
		return Flux.fromIterable(words)
			.delayElements(BETWEEN_CHUNKS)
			.map((word) -> chunk(model, Map.of("content", word), null));
	}

	private static Flux<ServerSentEvent<Object>> end(String model, String finishReason, int completionTokens) {
		Map<String, Object> usage = new LinkedHashMap<>();
		usage.put("id", "chatcmpl-sim");
		usage.put("object", "chat.completion.chunk");
		usage.put("model", model);
		usage.put("choices", List.of());
		usage.put("usage", Map.of("prompt_tokens", 12, "completion_tokens", completionTokens, "total_tokens",
				12 + completionTokens));
		return Flux.just(chunk(model, Map.of(), finishReason), ServerSentEvent.builder((Object) usage).build(),
				ServerSentEvent.builder((Object) "[DONE]").build());
	}

	private static ServerSentEvent<Object> chunk(String model, Map<String, Object> delta, @Nullable String finishReason) {
		Map<String, Object> choice = new LinkedHashMap<>();
		choice.put("index", 0);
		choice.put("delta", delta);
		choice.put("finish_reason", finishReason);
		Map<String, Object> chunk = new LinkedHashMap<>();
		chunk.put("id", "chatcmpl-sim");
		chunk.put("object", "chat.completion.chunk");
		chunk.put("model", model);
		chunk.put("choices", List.of(choice));
		return ServerSentEvent.builder((Object) chunk).build();
	}

}
