package dev.llmresilience.support;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import tools.jackson.databind.json.JsonMapper;

/**
 * The wire protocols an endpoint can speak, each with the answers a test server gives in it: a good
 * answer, an empty or unreadable one, a content-filter block, an error status, and the events of a
 * stream. The failure-rule tests run once per protocol over these, so that every rule is shown to
 * hold whatever the protocol.
 */
public enum Wire {

	/** OpenAI-compatible chat completions. */
	OPENAI("openai"),

	/** Anthropic's Messages API. */
	ANTHROPIC("anthropic"),

	/** Azure OpenAI's deployment API. */
	AZURE_OPENAI("azure-openai"),

	/** OpenAI's Responses API. */
	OPENAI_RESPONSES("openai-responses");

	private static final JsonMapper json = JsonMapper.builder().build();

	private final String protocol;

	Wire(String protocol) {
		this.protocol = protocol;
	}

	/**
	 * The protocol's name, as {@code llm.endpoints.<name>.protocol} spells it.
	 * @return the name
	 */
	public String protocol() {
		return this.protocol;
	}

	/**
	 * The properties of an endpoint that speaks this protocol to a server.
	 * @param endpoint the endpoint's name
	 * @param server the server
	 * @return the properties
	 */
	public List<String> properties(String endpoint, MockWebServer server) {
		String prefix = "llm.endpoints." + endpoint + ".";
		List<String> properties = new ArrayList<>(List.of(prefix + "protocol=" + this.protocol,
				prefix + "model=" + endpoint + "-model", prefix + "api-key=sk-test-" + endpoint + "-0123456789"));
		if (this == AZURE_OPENAI) {
			properties.add(prefix + "base-url=" + server.url("/"));
			properties.add(prefix + "deployment=" + endpoint + "-deployment");
		}
		else {
			properties.add(prefix + "base-url=" + server.url("/v1"));
		}
		return properties;
	}

	/**
	 * The path a request of an endpoint of {@link #properties} is sent to.
	 * @param endpoint the endpoint's name
	 * @return the path, without the query
	 */
	public String path(String endpoint) {
		return switch (this) {
			case OPENAI -> "/v1/chat/completions";
			case ANTHROPIC -> "/v1/messages";
			case AZURE_OPENAI -> "/openai/deployments/" + endpoint + "-deployment/chat/completions";
			case OPENAI_RESPONSES -> "/v1/responses";
		};
	}

	/**
	 * A good answer.
	 * @param content its text
	 * @return the response
	 */
	public MockResponse answer(String content) {
		if (this == ANTHROPIC) {
			return Answers.json(200, message(List.of(Map.of("type", "text", "text", content)), "end_turn"));
		}
		if (this == OPENAI_RESPONSES) {
			return Answers.json(200, json.writeValueAsString(response("completed", null, List.of(outputMessage(content)), 2)));
		}
		return Answers.completion(content);
	}

	/**
	 * An answer with neither text nor tool calls.
	 * @return the response
	 */
	public MockResponse empty() {
		if (this == OPENAI_RESPONSES) {
			return Answers.json(200, json.writeValueAsString(response("completed", null, List.of(outputMessage("")), 0)));
		}
		return (this == ANTHROPIC) ? Answers.json(200, message(List.of(), "end_turn")) : Answers.completion("");
	}

	/**
	 * A 200 whose body is not JSON.
	 * @return the response
	 */
	public MockResponse malformed() {
		return Answers.json(200, "<html>upstream proxy error</html>");
	}

	/**
	 * An answer the provider's content filter blocked: Anthropic's {@code refusal}, Azure's documented
	 * 400, OpenAI's {@code finish_reason: content_filter}, the Responses API's {@code incomplete}
	 * answer with {@code incomplete_details.reason: content_filter}.
	 * @return the response
	 */
	public MockResponse contentFiltered() {
		return switch (this) {
			case OPENAI_RESPONSES -> Answers.json(200, json.writeValueAsString(response("incomplete", "content_filter",
					List.of(), 0)));
			case ANTHROPIC -> Answers.json(200, message(List.of(), "refusal"));
			case AZURE_OPENAI -> Answers.json(400, Answers.fixture("azure/azure-400-content-filter-error.json"));
			case OPENAI -> Answers.json(200, "{\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
					+ "\"content\":null},\"finish_reason\":\"content_filter\"}]}");
		};
	}

	/**
	 * An error status with the protocol's error body.
	 * @param status the status
	 * @return the response
	 */
	public MockResponse error(int status) {
		if (this == ANTHROPIC) {
			return Answers.json(status, json.writeValueAsString(Map.of("type", "error", "error",
					Map.of("type", anthropicType(status), "message", "upstream said " + status), "request_id", "req_1")));
		}
		if (this == AZURE_OPENAI) {
			return Answers.json(status, "{\"error\":{\"code\":\"" + status + "\",\"message\":\"upstream said "
					+ status + "\"}}");
		}
		return Answers.error(status, (status < 500) ? "invalid_request_error" : "server_error");
	}

	/**
	 * The provider's 400 for a prompt longer than the model's context window.
	 * @return the response
	 */
	public MockResponse contextLengthExceeded() {
		if (this == ANTHROPIC) {
			return Answers.json(400, "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
					+ "\"message\":\"prompt is too long: 208310 tokens > 200000 maximum\"}}");
		}
		if (this == OPENAI_RESPONSES) {
			// the body /v1/responses answers (param "input"), as reports of it quote it
			return Answers.json(400, "{\"error\":{\"message\":\"Your input exceeds the context window of this model. "
					+ "Please adjust your input and try again.\",\"type\":\"invalid_request_error\",\"param\":\"input\","
					+ "\"code\":\"context_length_exceeded\"}}");
		}
		return Answers.json(400, "{\"error\":{\"message\":\"This model's maximum context length is 128000 tokens.\","
				+ "\"type\":\"invalid_request_error\",\"param\":\"messages\",\"code\":\"context_length_exceeded\"}}");
	}

	/**
	 * A whole, well-formed stream of the given text deltas.
	 * @param words the deltas
	 * @return the SSE text
	 */
	public String stream(String... words) {
		StringBuilder body = new StringBuilder(streamStart());
		for (String word : words) {
			body.append(text(word));
		}
		return body.append(finish((this == ANTHROPIC) ? "end_turn" : "stop", words.length)).append(end()).toString();
	}

	/**
	 * The events that open a stream before its first text: OpenAI's role chunk, Anthropic's
	 * {@code message_start}, {@code content_block_start} and a {@code ping}.
	 * @return the SSE text
	 */
	public String streamStart() {
		if (this == ANTHROPIC) {
			return event("message_start", Map.of("type", "message_start", "message", Map.of("id", "msg_1", "type",
					"message", "role", "assistant", "model", "served-model", "content", List.of(), "usage",
					Map.of("input_tokens", 5, "output_tokens", 1))))
					+ event("content_block_start", Map.of("type", "content_block_start", "index", 0, "content_block",
							Map.of("type", "text", "text", "")))
					+ event("ping", Map.of("type", "ping"));
		}
		if (this == OPENAI_RESPONSES) {
			return event("response.created", Map.of("type", "response.created", "sequence_number", 0, "response",
					response("in_progress", null, List.of(), null)))
					+ event("response.in_progress", Map.of("type", "response.in_progress", "sequence_number", 1,
							"response", response("in_progress", null, List.of(), null)))
					+ event("response.output_item.added", Map.of("type", "response.output_item.added", "sequence_number",
							2, "output_index", 0, "item", Map.of("id", "msg_1", "type", "message", "status", "in_progress",
									"role", "assistant", "content", List.of())))
					+ event("response.content_part.added", Map.of("type", "response.content_part.added",
							"sequence_number", 3, "item_id", "msg_1", "output_index", 0, "content_index", 0, "part",
							Map.of("type", "output_text", "text", "", "annotations", List.of())));
		}
		return Answers.role();
	}

	/**
	 * An event with a text delta.
	 * @param text the text
	 * @return the SSE text
	 */
	public String text(String text) {
		if (this == ANTHROPIC) {
			return event("content_block_delta", Map.of("type", "content_block_delta", "index", 0, "delta",
					Map.of("type", "text_delta", "text", text)));
		}
		if (this == OPENAI_RESPONSES) {
			return event("response.output_text.delta", Map.of("type", "response.output_text.delta", "item_id", "msg_1",
					"output_index", 0, "content_index", 0, "delta", text, "logprobs", List.of()));
		}
		return Answers.content(text);
	}

	/**
	 * The events that carry the finish reason and the usage, without the stream's end marker. The
	 * Responses API has no marker after them: its {@code response.completed} (for {@code stop}) or
	 * {@code response.incomplete} (for {@code length}, {@code content_filter}) ends the stream too.
	 * @param reason the finish reason, in the protocol's words
	 * @param completionTokens the completion's tokens
	 * @return the SSE text
	 */
	public String finish(String reason, int completionTokens) {
		if (this == ANTHROPIC) {
			return event("content_block_stop", Map.of("type", "content_block_stop", "index", 0))
					+ event("message_delta", Map.of("type", "message_delta", "delta", Map.of("stop_reason", reason),
							"usage", Map.of("output_tokens", completionTokens)));
		}
		if (this == OPENAI_RESPONSES) {
			String status = "stop".equals(reason) ? "completed" : "incomplete";
			String incomplete = "length".equals(reason) ? "max_output_tokens" : "stop".equals(reason) ? null : reason;
			String type = "stop".equals(reason) ? "response.completed" : "response.incomplete";
			return event(type, Map.of("type", type, "sequence_number", 9, "response",
					response(status, incomplete, List.of(), completionTokens)));
		}
		return Answers.finish(reason) + Answers.usage(5, completionTokens);
	}

	/**
	 * The protocol's end of a stream: {@code [DONE]} or {@code message_stop}; nothing for the
	 * Responses API, whose {@link #finish} events end it.
	 * @return the SSE text
	 */
	public String end() {
		if (this == OPENAI_RESPONSES) {
			return "";
		}
		return (this == ANTHROPIC) ? event("message_stop", Map.of("type", "message_stop")) : Answers.DONE;
	}

	/**
	 * An error sent inside a 200 stream: Anthropic's {@code overloaded_error} event (the SDK test's
	 * frame), the Responses API's {@code error} event, or an OpenAI-style {@code error} object.
	 * @return the SSE text
	 */
	public String errorEvent() {
		if (this == ANTHROPIC) {
			return Answers.fixture("anthropic/sdkpy-test-stream-error-event-overloaded.sse");
		}
		if (this == OPENAI_RESPONSES) {
			return "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"The server is "
					+ "overloaded\",\"param\":null,\"sequence_number\":7}\n\n";
		}
		return "data: {\"error\":{\"message\":\"The server is overloaded\",\"type\":\"server_error\",\"code\":null}}\n\n";
	}

	/**
	 * A stream the content filter blocks before any text.
	 * @return the SSE text
	 */
	public String contentFilteredStream() {
		return switch (this) {
			case ANTHROPIC -> Answers.fixture("anthropic/sdkpy-stream-refusal.sse");
			case AZURE_OPENAI, OPENAI -> streamStart() + Answers.finish("content_filter") + end();
			case OPENAI_RESPONSES -> streamStart() + finish("content_filter", 0);
		};
	}

	private static String anthropicType(int status) {
		return switch (status) {
			case 400, 409, 422 -> "invalid_request_error";
			case 401 -> "authentication_error";
			case 403 -> "permission_error";
			case 404 -> "not_found_error";
			case 413 -> "request_too_large";
			case 429 -> "rate_limit_error";
			case 529 -> "overloaded_error";
			default -> "api_error";
		};
	}

	private static String message(List<Map<String, Object>> content, String stopReason) {
		Map<String, Object> message = new LinkedHashMap<>();
		message.put("id", "msg_1");
		message.put("type", "message");
		message.put("role", "assistant");
		message.put("model", "served-model");
		message.put("content", content);
		message.put("stop_reason", stopReason);
		message.put("stop_sequence", null);
		message.put("usage", Map.of("input_tokens", 5, "output_tokens", 2));
		return json.writeValueAsString(message);
	}

	// A response object as the recorded answers have it (fixtures/openai-responses), only what the tests vary.
	private static Map<String, Object> response(String status, String incompleteReason, List<Object> output,
			Integer outputTokens) {
		Map<String, Object> response = new LinkedHashMap<>();
		response.put("id", "resp_1");
		response.put("object", "response");
		response.put("created_at", 1754925861);
		response.put("status", status);
		response.put("error", null);
		response.put("incomplete_details", (incompleteReason != null) ? Map.of("reason", incompleteReason) : null);
		response.put("model", "served-model");
		response.put("output", output);
		response.put("store", false);
		response.put("usage", (outputTokens == null) ? null : Map.of("input_tokens", 5, "input_tokens_details",
				Map.of("cached_tokens", 0), "output_tokens", outputTokens, "output_tokens_details",
				Map.of("reasoning_tokens", 0), "total_tokens", 5 + outputTokens));
		return response;
	}

	private static Map<String, Object> outputMessage(String text) {
		return Map.of("id", "msg_1", "type", "message", "status", "completed", "role", "assistant", "content",
				List.of(Map.of("type", "output_text", "annotations", List.of(), "text", text)));
	}

	private static String event(String name, Map<String, Object> data) {
		return "event: " + name + "\ndata: " + json.writeValueAsString(data) + "\n\n";
	}

}
