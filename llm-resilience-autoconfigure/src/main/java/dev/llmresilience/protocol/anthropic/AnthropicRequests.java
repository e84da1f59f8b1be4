package dev.llmresilience.protocol.anthropic;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.failure.LlmInvalidRequestException;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Turns a {@link ChatRequest}, which speaks OpenAI's terms, into a Messages API request. A route may
 * put an Anthropic endpoint behind an OpenAI one, so the same request must not be refused here for
 * a difference of names: OpenAI's fields that Anthropic spells otherwise are translated, and those it
 * has no equivalent for (and would refuse with a 400, which no fallback follows) are left out.
 */
final class AnthropicRequests {

	/**
	 * The {@code max_tokens} of a request that sets none: the Messages API requires one, and every
	 * current Claude model can produce at least this many.
	 */
	static final int DEFAULT_MAX_TOKENS = 4096;

	// OpenAI's request fields without an Anthropic equivalent: sent, they would be refused.
	private static final Set<String> DROPPED = Set.of("n", "presence_penalty", "frequency_penalty", "logit_bias",
			"logprobs", "top_logprobs", "seed", "response_format", "stream_options", "service_tier", "store",
			"modalities", "audio", "prediction", "reasoning_effort", "web_search_options");

	// OpenAI's request fields that Anthropic spells otherwise: see translate(). tools and tool_choice
	// are the request's own fields (ReservedFields refuses them in extra).
	private static final Set<String> TRANSLATED = Set.of("stop", "parallel_tool_calls", "user",
			"max_completion_tokens");

	private static final JsonMapper mapper = JsonMapper.builder().build();

	// Set from the request's own fields; an extra field of the same name would be sent twice.
	private static final Set<String> OWN_FIELDS = Set.of("model", "max_tokens", "messages", "system", "temperature",
			"stream");

	private AnthropicRequests() {
	}

	/**
	 * The wire request.
	 * @param model the endpoint's model
	 * @param request the request
	 * @param stream whether to stream
	 * @return the body to send
	 */
	static AnthropicRequest toWire(String model, ChatRequest request, boolean stream) {
		List<String> system = new ArrayList<>();
		List<AnthropicRequest.Message> messages = new ArrayList<>();
		for (ChatMessage message : request.messages()) {
			switch (message.role()) {
				case "system", "developer" -> system.add(message.text());
				// Tool calls and results are not mapped to tool_use blocks yet: a result goes as the user's text,
				// and text() gives a message of parts (or of tool calls only) its text.
				case "tool" -> messages.add(new AnthropicRequest.Message("user", message.text()));
				default -> messages.add(new AnthropicRequest.Message(message.role(), message.text()));
			}
		}
		trimFinalAssistantTurn(messages);
		return new AnthropicRequest(model, maxTokens(request), messages,
				system.isEmpty() ? null : String.join("\n\n", system), temperature(request.temperature()),
				stream ? Boolean.TRUE : null, translate(request));
	}

	// A conversation that ends with an assistant turn asks Claude to continue it (a stream resumed on
	// this endpoint), and the Messages API refuses such a turn that ends in whitespace.
	private static void trimFinalAssistantTurn(List<AnthropicRequest.Message> messages) {
		int last = messages.size() - 1;
		if (last >= 0 && "assistant".equals(messages.get(last).role())
				&& messages.get(last).content() instanceof String text) {
			String trimmed = text.stripTrailing();
			if (trimmed.isEmpty()) {
				messages.remove(last);
			}
			else {
				messages.set(last, new AnthropicRequest.Message("assistant", trimmed));
			}
		}
	}

	private static int maxTokens(ChatRequest request) {
		if (request.maxTokens() != null) {
			return request.maxTokens();
		}
		if (request.extra().get("max_completion_tokens") instanceof Number number) {
			return number.intValue();
		}
		return DEFAULT_MAX_TOKENS;
	}

	// OpenAI's scale runs to 2, Anthropic's to 1: clamped rather than refused.
	private static @Nullable Double temperature(@Nullable Double temperature) {
		return (temperature != null) ? Math.max(0.0, Math.min(1.0, temperature)) : null;
	}

	private static Map<String, Object> translate(ChatRequest request) {
		Map<String, Object> extra = request.extra();
		Map<String, Object> wire = new LinkedHashMap<>();
		extra.forEach((name, value) -> {
			if (!DROPPED.contains(name) && !TRANSLATED.contains(name) && !OWN_FIELDS.contains(name)) {
				wire.put(name, value);
			}
		});
		Object stop = extra.get("stop");
		if (stop != null && !wire.containsKey("stop_sequences")) {
			wire.put("stop_sequences", (stop instanceof List<?> list) ? list : List.of(stop));
		}
		if (!request.tools().isEmpty()) {
			wire.put("tools", request.tools().stream().map(AnthropicRequests::tool).toList());
		}
		Map<String, Object> toolChoice = toolChoice(request.toolChoice());
		if (Boolean.FALSE.equals(extra.get("parallel_tool_calls"))) {
			toolChoice = (toolChoice != null) ? new LinkedHashMap<>(toolChoice) : new LinkedHashMap<>(Map.of("type", "auto"));
			if (!"none".equals(toolChoice.get("type"))) {
				toolChoice.put("disable_parallel_tool_use", true);
			}
		}
		if (toolChoice != null) {
			wire.put("tool_choice", toolChoice);
		}
		if (extra.get("user") instanceof String user && !wire.containsKey("metadata")) {
			wire.put("metadata", Map.of("user_id", user));
		}
		return wire;
	}

	// {"type": "function", "function": {"name", "description", "parameters"}} -> {"name", "description", "input_schema"}
	private static Map<String, Object> tool(Tool tool) {
		Map<String, Object> wire = new LinkedHashMap<>();
		wire.put("name", tool.name());
		if (tool.description() != null) {
			wire.put("description", tool.description());
		}
		wire.put("input_schema", (tool.parameters() != null) ? schema(tool) : Map.of("type", "object", "properties", Map.of()));
		return wire;
	}

	private static Object schema(Tool tool) {
		try {
			Object schema = mapper.readValue(tool.parameters(), Object.class);
			if (schema instanceof Map<?, ?>) {
				return schema;
			}
		}
		catch (JacksonException ex) {
			// refused below
		}
		throw new LlmInvalidRequestException("The parameters of tool '" + tool.name()
				+ "' are not a JSON object; give its JSON Schema as JSON text, e.g. {\"type\":\"object\",\"properties\":{}}",
				null, 0, "invalid_tool_parameters");
	}

	private static @Nullable Map<String, Object> toolChoice(@Nullable ToolChoice choice) {
		if (choice == null) {
			return null;
		}
		return switch (choice.mode()) {
			case AUTO -> Map.of("type", "auto");
			case NONE -> Map.of("type", "none");
			case REQUIRED -> Map.of("type", "any");
			case FUNCTION -> Map.of("type", "tool", "name", String.valueOf(choice.function()));
		};
	}

}
