package dev.llmresilience.sample;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * A simulated Anthropic Messages API at {@code /sim/{provider}/anthropic/v1/messages}, in the same
 * modes as {@link SimulatedProvider} (switched with {@code POST /sim/{provider}/mode}), each in
 * Anthropic's terms: a failing provider answers 529 {@code overloaded_error}, a rate limit 429
 * {@code rate_limit_error} with {@code retry-after}, the content filter {@code stop_reason: refusal}.
 * Like the real API it wants {@code x-api-key}, {@code anthropic-version} and {@code max_tokens}.
 */
@RestController
class SimulatedAnthropic {

	private final SimulatedModes modes;

	SimulatedAnthropic(SimulatedModes modes) {
		this.modes = modes;
	}

	@PostMapping(path = "/sim/{provider}/anthropic/v1/messages", produces = MediaType.APPLICATION_JSON_VALUE)
	Mono<? extends ResponseEntity<?>> messages(@PathVariable String provider,
			@RequestHeader(name = "x-api-key", required = false) @Nullable String key,
			@RequestHeader(name = "anthropic-version", required = false) @Nullable String version,
			@RequestBody Map<String, Object> request) {
		if (key == null || key.isBlank()) {
			return Mono.just(error(HttpStatus.UNAUTHORIZED, "authentication_error", "x-api-key header is required"));
		}
		if (version == null || !(request.get("max_tokens") instanceof Number)) {
			return Mono.just(error(HttpStatus.BAD_REQUEST, "invalid_request_error",
					(version == null) ? "anthropic-version: header is required" : "max_tokens: Field required"));
		}
		if (!this.modes.admits(provider)) {
			return Mono.just(SimulatedModes.refused());
		}
		SimulatedMode mode = this.modes.request(provider);
		String model = String.valueOf(request.getOrDefault("model", "sim"));
		String text = "[" + provider + "] You said: " + SimulatedModes.lastUserMessage(request);
		if (Boolean.TRUE.equals(request.get("stream")) && mode.streams()) {
			return Mono.just(ResponseEntity.ok()
				.contentType(MediaType.TEXT_EVENT_STREAM)
				.body(SimulatedAnthropicStream.answer(mode, model, text, SimulatedModes.assistantPrefix(request),
						this.modes.cutAfter(provider))));
		}
		return switch (mode) {
			case OK, STREAM_CUT, STREAM_STALL, SLOW_FIRST_TOKEN, STREAM_ERROR ->
				Mono.just(ResponseEntity.ok(message(model, text, "end_turn")));
			case SLOW -> Mono.delay(Duration.ofSeconds(2))
				.map((tick) -> ResponseEntity.ok(message(model, "[" + provider + "] (slowly) You said: "
						+ SimulatedModes.lastUserMessage(request), "end_turn")));
			case ERROR -> Mono.just(error(HttpStatusCode.valueOf(529), "overloaded_error", "Overloaded"));
			case TIMEOUT -> Mono.never();
			case RATE_LIMIT -> Mono.just(ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
				.header("retry-after", "1")
				.body(errorBody("rate_limit_error", "This request would exceed your organization's rate limit.")));
			case EMPTY -> Mono.just(ResponseEntity.ok(message(model, null, "end_turn")));
			case CONTENT_FILTER -> Mono.just(ResponseEntity.ok(message(model, null, "refusal")));
		};
	}

	private static Map<String, Object> message(String model, @Nullable String text, String stopReason) {
		Map<String, Object> message = new LinkedHashMap<>();
		message.put("id", "msg_sim");
		message.put("type", "message");
		message.put("role", "assistant");
		message.put("model", model);
		message.put("content", (text != null) ? List.of(Map.of("type", "text", "text", text)) : List.of());
		message.put("stop_reason", stopReason);
		message.put("stop_sequence", null);
		message.put("usage", Map.of("input_tokens", 12, "output_tokens",
				(text != null) ? Math.max(1, text.length() / 4) : 0));
		return message;
	}

	private static ResponseEntity<Map<String, Object>> error(HttpStatusCode status, String type, String message) {
		return ResponseEntity.status(status).body(errorBody(type, message));
	}

	private static Map<String, Object> errorBody(String type, String message) {
		return Map.of("type", "error", "error", Map.of("type", type, "message", message), "request_id", "req_sim");
	}

}
