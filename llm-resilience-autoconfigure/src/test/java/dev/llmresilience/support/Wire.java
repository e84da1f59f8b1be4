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
	AZURE_OPENAI("azure-openai");

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
		return Answers.completion(content);
	}

	/**
	 * An answer with neither text nor tool calls.
	 * @return the response
	 */
	public MockResponse empty() {
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
	 * 400, OpenAI's {@code finish_reason: content_filter}.
	 * @return the response
	 */
	public MockResponse contentFiltered() {
		return switch (this) {
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
		return Answers.content(text);
	}

	/**
	 * The events that carry the finish reason and the usage, without the stream's end marker.
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
		return Answers.finish(reason) + Answers.usage(5, completionTokens);
	}

	/**
	 * The protocol's end of a stream: {@code [DONE]} or {@code message_stop}.
	 * @return the SSE text
	 */
	public String end() {
		return (this == ANTHROPIC) ? event("message_stop", Map.of("type", "message_stop")) : Answers.DONE;
	}

	/**
	 * An error sent inside a 200 stream: Anthropic's {@code overloaded_error} event (the SDK test's
	 * frame), or an OpenAI-style {@code error} object.
	 * @return the SSE text
	 */
	public String errorEvent() {
		if (this == ANTHROPIC) {
			return Answers.fixture("anthropic/sdkpy-test-stream-error-event-overloaded.sse");
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

	private static String event(String name, Map<String, Object> data) {
		return "event: " + name + "\ndata: " + json.writeValueAsString(data) + "\n\n";
	}

}
