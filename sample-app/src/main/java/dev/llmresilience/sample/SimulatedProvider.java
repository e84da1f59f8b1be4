package dev.llmresilience.sample;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A simulated OpenAI-compatible provider at {@code /sim/{provider}/v1/chat/completions}, and the
 * same answers at an Azure OpenAI deployment's path,
 * {@code /sim/{provider}/openai/deployments/{deployment}/chat/completions?api-version=...}, which
 * wants Azure's {@code api-key} header and answers its content filter and rate limit as Azure does.
 * Each provider name has its own mode, switched with {@code POST /sim/{provider}/mode} (Anthropic's
 * Messages API is {@link SimulatedAnthropic}). A request with {@code "stream": true} is answered
 * with server-sent events, word by word (see {@link SimulatedStream}).
 */
@RestController
@RequestMapping("/sim/{provider}")
class SimulatedProvider {

	private final SimulatedModes modes;

	SimulatedProvider(SimulatedModes modes) {
		this.modes = modes;
	}

	// A streamed answer sets its own Content-Type (text/event-stream), which wins over "produces".
	@PostMapping(path = "/v1/chat/completions", produces = MediaType.APPLICATION_JSON_VALUE)
	Mono<? extends ResponseEntity<?>> complete(@PathVariable String provider, @RequestBody Map<String, Object> request) {
		return answer(provider, request, false);
	}

	@PostMapping(path = "/openai/deployments/{deployment}/chat/completions", produces = MediaType.APPLICATION_JSON_VALUE)
	Mono<? extends ResponseEntity<?>> completeOnAzure(@PathVariable String provider, @PathVariable String deployment,
			@RequestParam("api-version") String apiVersion, @RequestHeader(name = "api-key", required = false) @Nullable String key,
			@RequestBody Map<String, Object> request) {
		if (key == null || key.isBlank()) {
			return Mono.just(ResponseEntity.status(HttpStatus.UNAUTHORIZED).body(Map.of("error", Map.of("code", "401",
					"message", "Access denied due to invalid subscription key or wrong API endpoint."))));
		}
		Map<String, Object> named = new LinkedHashMap<>(request);
		named.put("model", deployment);
		return answer(provider, named, true);
	}

	private Mono<? extends ResponseEntity<?>> answer(String provider, Map<String, Object> request, boolean azure) {
		if (!this.modes.admits(provider)) {
			return Mono.just(SimulatedModes.refused());
		}
		SimulatedMode mode = this.modes.request(provider);
		String model = String.valueOf(request.getOrDefault("model", "sim"));
		String text = "[" + provider + "] You said: " + SimulatedModes.lastUserMessage(request);
		if (Boolean.TRUE.equals(request.get("stream")) && mode.streams()) {
			return Mono.just(ResponseEntity.ok()
				.contentType(MediaType.TEXT_EVENT_STREAM)
				.body(SimulatedStream.answer(mode, model, text, SimulatedModes.assistantPrefix(request),
						this.modes.cutAfter(provider))));
		}
		return switch (mode) {
			// The stream modes do not change a plain answer.
			case OK, STREAM_CUT, STREAM_STALL, SLOW_FIRST_TOKEN, STREAM_ERROR ->
				Mono.just(ResponseEntity.ok(completion(model, text, "stop")));
			case SLOW -> Mono.delay(Duration.ofSeconds(2))
				.map((tick) -> ResponseEntity.ok(completion(model, "[" + provider + "] (slowly) You said: "
						+ SimulatedModes.lastUserMessage(request), "stop")));
			case ERROR -> Mono.just(ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR)
				.body(error("The simulated provider is failing", "server_error", null)));
			case TIMEOUT -> Mono.never();
			case RATE_LIMIT -> Mono.just(ResponseEntity.status(HttpStatus.TOO_MANY_REQUESTS)
				.header(azure ? "retry-after-ms" : "Retry-After", azure ? "1000" : "1")
				.body(azure ? Map.of("error", Map.of("code", "429", "message", "Requests to the ChatCompletions_Create "
						+ "Operation have exceeded the rate limit of your current pricing tier. Please retry after 1 second."))
						: error("Rate limit reached for requests", "requests", "rate_limit_exceeded")));
			case EMPTY -> Mono.just(ResponseEntity.ok(completion(model, "", "stop")));
			// Azure filters the prompt with a 400; OpenAI-compatible servers end the answer early.
			case CONTENT_FILTER -> Mono.just(azure
					? ResponseEntity.badRequest().body(error("The response was filtered due to the prompt triggering "
							+ "Azure OpenAI's content management policy.", null, "content_filter"))
					: ResponseEntity.ok(completion(model, null, "content_filter")));
		};
	}

	@PostMapping("/mode")
	ResponseEntity<Map<String, Object>> setMode(@PathVariable String provider, @RequestBody Map<String, Object> body) {
		SimulatedMode mode = SimulatedMode.from((body.get("mode") != null) ? String.valueOf(body.get("mode")) : null);
		if (mode == null) {
			return ResponseEntity.badRequest()
				.body(Map.of("error", "Unknown mode '" + body.get("mode") + "'", "modes", SimulatedMode.names()));
		}
		Integer after = SimulatedModes.after(body.get("after"));
		if (after == null) {
			return ResponseEntity.badRequest()
				.body(Map.of("error", "'after' must be a whole number from 0 to " + SimulatedModes.MAX_AFTER));
		}
		if (!this.modes.admits(provider)) {
			return SimulatedModes.refused();
		}
		this.modes.set(provider, mode, after);
		return ResponseEntity.ok(this.modes.state(provider));
	}

	@GetMapping("/mode")
	ResponseEntity<Map<String, Object>> getMode(@PathVariable String provider) {
		return this.modes.admits(provider) ? ResponseEntity.ok(this.modes.state(provider)) : SimulatedModes.refused();
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

	private static Map<String, Object> error(String message, @Nullable String type, @Nullable String code) {
		Map<String, Object> error = new LinkedHashMap<>();
		error.put("message", message);
		error.put("type", type);
		error.put("code", code);
		return Map.of("error", error);
	}

}
