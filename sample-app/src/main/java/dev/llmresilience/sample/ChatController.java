package dev.llmresilience.sample;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Priority;
import dev.llmresilience.failure.LlmRequestException;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.gateway.LlmGateway;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The sample's chat API: {@code POST /api/chat} answers with the gateway's {@link ChatResponse};
 * {@code GET /api/deferred/{ticket}} with the state of a deferred request (404 for an unknown one);
 * {@code POST /api/chat/stream} streams the answer as server-sent events, one per {@link ChatChunk}.
 */
@RestController
@RequestMapping("/api")
class ChatController {

	private final LlmGateway gateway;

	ChatController(LlmGateway gateway) {
		this.gateway = gateway;
	}

	@PostMapping("/chat")
	Mono<ChatResponse> chat(@RequestBody PromptRequest body) {
		return Mono.defer(() -> this.gateway.chat(body.toChatRequest()));
	}

	@GetMapping("/deferred/{ticket}")
	Mono<ResponseEntity<DeferredResult>> deferred(@PathVariable String ticket) {
		return this.gateway.deferred(ticket)
			.map(ResponseEntity::ok)
			.defaultIfEmpty(ResponseEntity.notFound().build());
	}

	/**
	 * Stream an answer: one event per {@link ChatChunk} (JSON), the last with {@code finishReason} and
	 * {@code usage}. A stream that breaks after it started ends with an {@code error} event whose data
	 * is {@code {"error", "message", "endpoint", "partial"}}.
	 */
	@PostMapping(path = "/chat/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
	Flux<ServerSentEvent<Object>> stream(@RequestBody PromptRequest body) {
		ChatRequest request = body.toChatRequest();
		return this.gateway.stream(request)
			.map((chunk) -> ServerSentEvent.<Object>builder(chunk).build())
			.onErrorResume(LlmStreamInterruptedException.class, (ex) -> {
				Map<String, Object> error = new LinkedHashMap<>();
				error.put("error", ex.outcome().name());
				error.put("message", ex.getMessage());
				error.put("endpoint", ex.endpoint());
				error.put("partial", ex.partial());
				return Flux.just(ServerSentEvent.<Object>builder(error).event("error").build());
			});
	}

	@ExceptionHandler(LlmRequestException.class)
	ResponseEntity<Map<String, Object>> callerError(LlmRequestException ex) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("error", ex.outcome().name());
		body.put("message", ex.getMessage());
		body.put("code", ex.code());
		body.put("endpoint", ex.endpoint());
		return ResponseEntity.badRequest().body(body);
	}

	@ExceptionHandler(IllegalArgumentException.class)
	ResponseEntity<Map<String, Object>> badBody(IllegalArgumentException ex) {
		return ResponseEntity.badRequest().body(Map.of("error", "INVALID_REQUEST", "message", ex.getMessage()));
	}

	/**
	 * The body of {@code POST /api/chat}.
	 *
	 * @param prompt the user's prompt
	 * @param route the route, or {@code null} for the default
	 * @param deferrable whether the request may be deferred
	 * @param priority {@code "interactive"} (the default) or {@code "batch"}, which yields to people
	 */
	record PromptRequest(@Nullable String prompt, @Nullable String route, @Nullable Boolean deferrable,
			@Nullable String priority) {

		/** The longest prompt taken: whoever reaches this API spends the configured providers' budget. */
		static final int MAX_PROMPT = 8000;

		ChatRequest toChatRequest() {
			if (this.prompt == null || this.prompt.isBlank()) {
				throw new IllegalArgumentException("'prompt' is required, e.g. {\"prompt\": \"Hello\"}");
			}
			if (this.prompt.length() > MAX_PROMPT) {
				throw new IllegalArgumentException("'prompt' is longer than " + MAX_PROMPT + " characters");
			}
			return ChatRequest.builder()
				.user(this.prompt)
				.route(this.route)
				.deferrable(Boolean.TRUE.equals(this.deferrable))
				.priority(Priority.parse(this.priority, "priority"))
				.build();
		}

	}

}
