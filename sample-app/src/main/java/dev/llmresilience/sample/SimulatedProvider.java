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
 * provider name has its own mode, switched with {@code POST /sim/{provider}/mode}.
 */
@RestController
@RequestMapping("/sim/{provider}")
class SimulatedProvider {

	private final Map<String, Mode> modes = new ConcurrentHashMap<>();

	private final Map<String, AtomicLong> requests = new ConcurrentHashMap<>();

	@PostMapping(path = "/v1/chat/completions", produces = MediaType.APPLICATION_JSON_VALUE)
	Mono<ResponseEntity<Map<String, Object>>> complete(@PathVariable String provider,
			@RequestBody Map<String, Object> request) {
		this.requests.computeIfAbsent(provider, (name) -> new AtomicLong()).incrementAndGet();
		Mode mode = this.modes.getOrDefault(provider, Mode.OK);
		String model = String.valueOf(request.getOrDefault("model", "sim"));
		String prompt = lastUserMessage(request);
		return switch (mode) {
			case OK -> Mono.just(ResponseEntity.ok(completion(model, "[" + provider + "] You said: " + prompt, "stop")));
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
	ResponseEntity<Map<String, Object>> setMode(@PathVariable String provider, @RequestBody Map<String, String> body) {
		Mode mode = Mode.from(body.get("mode"));
		if (mode == null) {
			return ResponseEntity.badRequest()
				.body(Map.of("error", "Unknown mode '" + body.get("mode") + "'", "modes", Mode.names()));
		}
		this.modes.put(provider, mode);
		return ResponseEntity.ok(state(provider));
	}

	@GetMapping("/mode")
	Map<String, Object> getMode(@PathVariable String provider) {
		return state(provider);
	}

	private Map<String, Object> state(String provider) {
		return Map.of("provider", provider, "mode", this.modes.getOrDefault(provider, Mode.OK).wireName(), "requests",
				this.requests.getOrDefault(provider, new AtomicLong()).get());
	}

	@SuppressWarnings("unchecked")
	private static String lastUserMessage(Map<String, Object> request) {
		Object messages = request.get("messages");
		if (messages instanceof List<?> list && !list.isEmpty() && list.get(list.size() - 1) instanceof Map<?, ?> last) {
			return String.valueOf(((Map<String, Object>) last).get("content"));
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

		OK, ERROR, TIMEOUT, RATE_LIMIT, EMPTY, CONTENT_FILTER, SLOW;

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
