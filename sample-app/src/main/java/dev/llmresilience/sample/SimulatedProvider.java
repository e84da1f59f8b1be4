package dev.llmresilience.sample;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

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
 * <p>
 * Anyone who reaches it can switch it, so the sample listens on loopback only (see
 * {@code application.yml}). It keeps state for at most {@value #MAX_PROVIDERS} provider names of
 * at most 32 letters, digits, {@code -} or {@code _}, and a stream mode's {@code after} is 0 to
 * {@value #MAX_AFTER}: a request outside those is a 400, so that no request can grow its memory.
 */
@RestController
@RequestMapping("/sim/{provider}")
class SimulatedProvider {

	static final int MAX_PROVIDERS = 16;

	static final int MAX_AFTER = 1000;

	private static final int DEFAULT_CUT_AFTER = 3;

	private static final Pattern PROVIDER = Pattern.compile("[A-Za-z0-9_-]{1,32}");

	private final Map<String, State> providers = new ConcurrentHashMap<>();

	// A streamed answer sets its own Content-Type (text/event-stream), which wins over "produces".
	@PostMapping(path = "/v1/chat/completions", produces = MediaType.APPLICATION_JSON_VALUE)
	Mono<? extends ResponseEntity<?>> complete(@PathVariable String provider, @RequestBody Map<String, Object> request) {
		State state = state(provider);
		if (state == null) {
			return Mono.just(unknownProvider(provider));
		}
		state.requests.incrementAndGet();
		Mode mode = state.mode;
		String model = String.valueOf(request.getOrDefault("model", "sim"));
		String prompt = lastUserMessage(request);
		if (Boolean.TRUE.equals(request.get("stream")) && mode.streams()) {
			return Mono.just(ResponseEntity.ok()
				.contentType(MediaType.TEXT_EVENT_STREAM)
				.body(SimulatedStream.answer(mode, model, "[" + provider + "] You said: " + prompt,
						assistantPrefix(request), state.after)));
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
		Integer after = after(body.get("after"));
		if (after == null) {
			return ResponseEntity.badRequest()
				.body(Map.of("error", "'after' must be a whole number from 0 to " + MAX_AFTER));
		}
		State state = state(provider);
		if (state == null) {
			return unknownProvider(provider);
		}
		state.mode = mode;
		state.after = after;
		return ResponseEntity.ok(state.describe(provider));
	}

	@GetMapping("/mode")
	ResponseEntity<Map<String, Object>> getMode(@PathVariable String provider) {
		State state = state(provider);
		return (state != null) ? ResponseEntity.ok(state.describe(provider)) : unknownProvider(provider);
	}

	private @Nullable State state(String provider) {
		if (!PROVIDER.matcher(provider).matches()) {
			return null;
		}
		State known = this.providers.get(provider);
		if (known != null) {
			return known;
		}
		synchronized (this.providers) {
			return (this.providers.size() < MAX_PROVIDERS) ? this.providers.computeIfAbsent(provider, (name) -> new State())
					: this.providers.get(provider);
		}
	}

	private static ResponseEntity<Map<String, Object>> unknownProvider(String provider) {
		return ResponseEntity.badRequest()
			.body(Map.of("error", "The simulator keeps at most " + MAX_PROVIDERS + " providers, named with at most "
					+ "32 letters, digits, - or _"));
	}

	private static @Nullable Integer after(@Nullable Object value) {
		if (value == null) {
			return DEFAULT_CUT_AFTER;
		}
		try {
			int after = Integer.parseInt(String.valueOf(value).trim());
			return (after >= 0 && after <= MAX_AFTER) ? after : null;
		}
		catch (NumberFormatException ex) {
			return null;
		}
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

	/** One simulated provider: its mode, its stream's cut, and the requests it received. */
	private static final class State {

		private volatile Mode mode = Mode.OK;

		private volatile int after = DEFAULT_CUT_AFTER;

		private final AtomicLong requests = new AtomicLong();

		Map<String, Object> describe(String provider) {
			return Map.of("provider", provider, "mode", this.mode.wireName(), "after", this.after, "requests",
					this.requests.get());
		}

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
