package dev.llmresilience.sample;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A simulated OpenAI-compatible provider at {@code /sim/{provider}/v1/chat/completions}. Each
 * provider name has its own mode, switched with {@code POST /sim/{provider}/mode}. A request with
 * {@code "stream": true} is answered with server-sent events, word by word (see
 * {@link SimulatedStream}).
 */
@RestController
@RequestMapping("/sim/{provider}")
class SimulatedProvider {

	private static final int DEFAULT_CUT_AFTER = 3;

	private final Map<String, Mode> modes = new ConcurrentHashMap<>();

	private final Map<String, AtomicLong> requests = new ConcurrentHashMap<>();

	private final Map<String, Integer> cutAfter = new ConcurrentHashMap<>();

	// A streamed answer sets its own Content-Type (text/event-stream), which wins over "produces".
	@PostMapping(path = "/v1/chat/completions", produces = MediaType.APPLICATION_JSON_VALUE)
	Mono<? extends ResponseEntity<?>> complete(@PathVariable String provider, @RequestBody Map<String, Object> request) {
		this.requests.computeIfAbsent(provider, (name) -> new AtomicLong()).incrementAndGet();
		Mode mode = this.modes.getOrDefault(provider, Mode.OK);
		String model = String.valueOf(request.getOrDefault("model", "sim"));
		String prompt = lastUserMessage(request);
		if (Boolean.TRUE.equals(request.get("stream")) && mode.streams()) {
			return Mono.just(ResponseEntity.ok()
				.contentType(MediaType.TEXT_EVENT_STREAM)
				.body(SimulatedStream.answer(mode, model, "[" + provider + "] You said: " + prompt,
						assistantPrefix(request), this.cutAfter.getOrDefault(provider, DEFAULT_CUT_AFTER))));
		}
		return switch (mode) {
			case OK -> Mono.just(ResponseEntity.ok(completion(model, "[" + provider + "] You said: " + prompt, "stop")));
			// The stream modes do not change a plain answer.
			case STREAM_CUT, STREAM_STALL, SLOW_FIRST_TOKEN ->
				Mono.just(ResponseEntity.ok(completion(model, "[" + provider + "] You said: " + prompt, "stop")));
			case SLOW -> Mono.delay(Duration.ofSeconds(2))
				.map((tick) -> ResponseEntity.ok(completion(model, "[" + provider + "] (slowly) You said: " + prompt, "stop")));
			case ERROR -> Mono.just(ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR)
				.body(error("The simulated provider is failing", "server_error", null)));
			case TIMEOUT -> Mono.never();
			case RATE_LIMIT -> Mono.just(ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
				.header("Retry-After", "1")
				.body(error("Rate limit reached for requests", "requests", "rate_limit_exceeded")));
			case EMPTY -> Mono.just(ResponseEntity.ok(completion(model, "", "stop")));
			case CONTENT_FILTER -> Mono.just(ResponseEntity.ok(completion(model, null, "content_filter")));
		};
	}

	@PostMapping("/mode")
	ResponseEntity<Map<String, Object>> setMode(@PathVariable String provider, @RequestBody Map<String, Object> body) {
		Mode mode = Mode.from((body.get("mode") != null) ? String.valueOf(body.get("mode")) : null);
		if (mode == null) {
			return ResponseEntity.badRequest()
				.body(Map.of("error", "Unknown mode '" + body.get("mode") + "'", "modes", Mode.names()));
		}
		this.modes.put(provider, mode);
		this.cutAfter.put(provider, (body.get("after") != null) ? Integer.parseInt(String.valueOf(body.get("after")))
				: DEFAULT_CUT_AFTER);
		return ResponseEntity.ok(state(provider));
	}

	@GetMapping("/mode")
	Map<String, Object> getMode(@PathVariable String provider) {
		return state(provider);
	}

	private Map<String, Object> state(String provider) {
		return Map.of("provider", provider, "mode", this.modes.getOrDefault(provider, Mode.OK).wireName(), "after",
				this.cutAfter.getOrDefault(provider, DEFAULT_CUT_AFTER), "requests",
				this.requests.getOrDefault(provider, new AtomicLong()).get());
	}

	private static String lastUserMessage(Map<String, Object> request) {
		List<?> messages = (request.get("messages") instanceof List<?> list) ? list : List.of();
		for (int i = messages.size() - 1; i >= 0; i--) {
			if (messages.get(i) instanceof Map<?, ?> message && "user".equals(message.get("role"))) {
				return String.valueOf(message.get("content"));
			}
		}
		return "";
	}

	// A conversation that ends with an assistant message asks to continue it (a resumed stream).
	private static String assistantPrefix(Map<String, Object> request) {
		List<?> messages = (request.get("messages") instanceof List<?> list) ? list : List.of();
		if (!messages.isEmpty() && messages.get(messages.size() - 1) instanceof Map<?, ?> last
				&& "assistant".equals(last.get("role"))) {
			return String.valueOf(last.get("content"));
		}
		return "";
	}

	private static Map<String, Object> completion(String model, @Nullable String content, String finishReason) {
		Map<String, Object> message = new LinkedHashMap<>();
		message.put("role", "assistant");
		message.put("content", content);
		int completionTokens = (content != null) ? Math.max(1, content.length() / 4) : 0;
		return Map.of("id", "chatcmpl-sim", "object", "chat.completion", "model", model, "choices",
				List.of(Map.of("index", 0, "message", message, "finish_reason", finishReason)), "usage",
				Map.of("prompt_tokens", 12, "completion_tokens", completionTokens, "total_tokens", 12 + completionTokens));
	}

	private static Map<String, Object> error(String message, String type, @Nullable String code) {
		Map<String, Object> error = new LinkedHashMap<>();
		error.put("message", message);
		error.put("type", type);
		error.put("code", code);
		return Map.of("error", error);
	}

	enum Mode {

		OK, ERROR, TIMEOUT, RATE_LIMIT, EMPTY, CONTENT_FILTER, SLOW,

		/** Streams only: the stream stops after {@code after} content chunks, with no finish reason or [DONE]. */
		STREAM_CUT,

		/** Streams only: the stream falls silent after {@code after} content chunks. */
		STREAM_STALL,

		/** Streams only: the role chunk at once, the first content after 5 s. */
		SLOW_FIRST_TOKEN;

		/**
		 * Whether a streamed request is answered with events in this mode; else it gets the same
		 * error (or silence) as a plain request.
		 */
		boolean streams() {
			return this != ERROR && this != TIMEOUT && this != RATE_LIMIT;
		}

		String wireName() {
			return name().toLowerCase(Locale.ROOT).replace('_', '-');
		}

		static @Nullable Mode from(@Nullable String name) {
			return Arrays.stream(values()).filter((mode) -> mode.wireName().equals(name)).findFirst().orElse(null);
		}

		static List<String> names() {
			return Arrays.stream(values()).map(Mode::wireName).toList();
		}

	}

}
