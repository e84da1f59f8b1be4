package dev.llmresilience.protocol.anthropic;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.failure.LlmInvalidRequestException;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
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

	// OpenAI's request fields that Anthropic spells otherwise: see translate() and toolChoice(). tools
	// and tool_choice are the request's own fields (ReservedFields refuses them in extra).
	private static final Set<String> TRANSLATED = Set.of("stop", "parallel_tool_calls", "user",
			"max_completion_tokens");

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private AnthropicRequests() {
	}

	/**
	 * The wire request.
	 * @param model the endpoint's model
	 * @param request the request
	 * @param stream whether to stream
	 * @return the body to send
	 * @throws LlmInvalidRequestException for a tool, a tool call or an image that cannot be sent
	 */
	static AnthropicRequest toWire(String model, ChatRequest request, boolean stream) {
		AnthropicTurns turns = AnthropicTurns.of(request.messages(), mapper);
		List<AnthropicRequest.Tool> tools = request.tools().isEmpty() ? null
				: request.tools().stream().map(AnthropicRequests::tool).toList();
		return new AnthropicRequest(model, maxTokens(request), turns.messages(), turns.system(),
				temperature(request.temperature()), stream ? Boolean.TRUE : null, tools,
				(tools != null) ? toolChoice(request) : null, translate(request.extra()));
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

	// Extra fields the typed ones do not set, with OpenAI's names translated.
	private static Map<String, Object> translate(Map<String, Object> extra) {
		Map<String, Object> wire = new LinkedHashMap<>();
		extra.forEach((name, value) -> {
			if (!DROPPED.contains(name) && !TRANSLATED.contains(name) && !AnthropicRequest.FIELDS.contains(name)) {
				wire.put(name, value);
			}
		});
		Object stop = extra.get("stop");
		if (stop != null && !wire.containsKey("stop_sequences")) {
			wire.put("stop_sequences", (stop instanceof List<?> list) ? list : List.of(stop));
		}
		if (extra.get("user") instanceof String user && !wire.containsKey("metadata")) {
			wire.put("metadata", Map.of("user_id", user));
		}
		return wire;
	}

	// {"type": "function", "function": {"name", "description", "parameters"}} -> {"name", "description", "input_schema"}
	private static AnthropicRequest.Tool tool(Tool tool) {
		Object schema = (tool.parameters() != null && !tool.parameters().isBlank()) ? schema(tool)
				: Map.of("type", "object", "properties", Map.of());
		return new AnthropicRequest.Tool(tool.name(), tool.description(), schema);
	}

	private static Object schema(Tool tool) {
		try {
			JsonNode schema = mapper.readTree(tool.parameters());
			if (schema.isObject()) {
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

	// Sent only with tools: without any, no tool can be called, and there is nothing to choose.
	// OpenAI's parallel_tool_calls: false is Anthropic's disable_parallel_tool_use, which a choice of
	// none does not take.
	private static AnthropicRequest.@Nullable ToolChoice toolChoice(ChatRequest request) {
		ToolChoice choice = request.toolChoice();
		boolean oneCall = Boolean.FALSE.equals(request.extra().get("parallel_tool_calls"));
		if (choice == null && !oneCall) {
			return null;
		}
		ToolChoice.Mode mode = (choice != null) ? choice.mode() : ToolChoice.Mode.AUTO;
		Boolean disableParallel = (oneCall && mode != ToolChoice.Mode.NONE) ? Boolean.TRUE : null;
		return switch (mode) {
			case AUTO -> new AnthropicRequest.ToolChoice("auto", null, disableParallel);
			case NONE -> new AnthropicRequest.ToolChoice("none", null, null);
			case REQUIRED -> new AnthropicRequest.ToolChoice("any", null, disableParallel);
			case FUNCTION -> new AnthropicRequest.ToolChoice("tool", choice.function(), disableParallel);
		};
	}

}
