package dev.llmresilience.openaiapi;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolChoice;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads the body of an OpenAI Responses API request ({@code POST /responses}) into a
 * {@link ChatRequest}: {@code input} (a string, or message, {@code function_call} and
 * {@code function_call_output} items) into messages, {@code instructions} into the first system
 * message, function tools and the sampling settings into their fields. Unlike chat completions,
 * nothing passes through unread: the Responses API has fields the gateway cannot keep (stored
 * responses, conversations, built-in tools, background runs), and a field it does not map is a
 * 400 naming it rather than a request answered as if the field had not been sent. {@code null}
 * counts as absent, as in chat completions.
 */
final class ResponsesRequestReader {

	/** What an item or a part of {@code input} may carry besides what it means: ids and states of earlier output. */
	private static final Set<String> ECHOED = Set.of("id", "status");

	private static final Set<String> ROLES = Set.of("user", "assistant", "system", "developer");

	/** Top-level fields refused with their own reason, which the message gives. */
	private static final Map<String, String> NOT_KEPT = Map.of("previous_response_id",
			"the gateway keeps no responses: send the whole conversation in 'input' (earlier output items included)",
			"conversation", "the gateway keeps no conversations: send the whole conversation in 'input'", "prompt",
			"the gateway has no stored prompts: send the prompt's text in 'instructions' and 'input'", "include",
			"the gateway adds no extra output data: leave 'include' out", "reasoning",
			"the gateway does not forward reasoning settings: leave 'reasoning' out", "text",
			"the gateway answers in plain text only: leave 'text' out", "context_management",
			"the gateway does not manage context: leave 'context_management' out");

	private final JsonMapper mapper;

	ResponsesRequestReader(JsonMapper mapper) {
		this.mapper = mapper;
	}

	/**
	 * Read a body.
	 * @param body the body
	 * @param priorityHeader the request's {@code x-llm-priority} header, or {@code null} when absent
	 * @return the request
	 * @throws WireFormatException naming the field when the body is not a Responses request this API serves
	 */
	ResponsesRequest read(JsonNode body, @Nullable String priorityHeader) {
		if (!body.isObject()) {
			throw new WireFormatException("The request body must be a JSON object", null);
		}
		for (Map.Entry<String, JsonNode> field : body.properties()) {
			if (!field.getValue().isNull()) {
				refuseUnkept(body, field.getKey(), field.getValue());
			}
		}
		String instructions = OpenAiRequestReader.optionalText(body, "instructions", "");
		List<ChatMessage> messages = new ArrayList<>();
		if (instructions != null) {
			messages.add(ChatMessage.system(instructions));
		}
		messages.addAll(input(body.get("input")));
		List<Tool> tools = tools(body.get("tools"));
		ChatRequest.Builder builder = ChatRequest.builder()
			.messages(messages)
			.temperature(OpenAiRequestReader.number(body, "temperature"))
			.maxTokens(OpenAiRequestReader.integer(body, "max_output_tokens"))
			.tools(tools)
			.toolChoice(toolChoice(body.get("tool_choice")));
		Double topP = OpenAiRequestReader.number(body, "top_p");
		if (topP != null) {
			builder.extra("top_p", topP);
		}
		String user = OpenAiRequestReader.optionalText(body, "user", "");
		if (user != null) {
			builder.extra("user", user);
		}
		boolean parallel = !has(body, "parallel_tool_calls") || OpenAiRequestReader.flag(body, "parallel_tool_calls",
				"parallel_tool_calls");
		if (has(body, "parallel_tool_calls")) {
			builder.extra("parallel_tool_calls", parallel);
		}
		Map<String, Object> metadata = metadata(body.get("metadata"));
		JsonNode forwarded = has(body, "metadata") ? OpenAiRequestReader.withoutPriority(body.get("metadata")) : null;
		if (forwarded != null) {
			builder.extra("metadata", this.mapper.treeToValue(forwarded, Object.class));
		}
		builder.priority(OpenAiRequestReader.priority(priorityHeader, body.get("metadata")));
		builder.route(OpenAiRequestReader.route(body));
		boolean stream = OpenAiRequestReader.flag(body, "stream", "stream");
		streamOptions(body.get("stream_options"), stream);
		try {
			return new ResponsesRequest(builder.build(), stream, instructions, topP, metadata, parallel);
		}
		catch (IllegalArgumentException ex) {
			throw new WireFormatException(ex.getMessage(), null);
		}
	}

	/**
	 * Refuse a field the gateway cannot keep, or does not know: {@code store: true} (the gateway
	 * stores no responses: {@code store: false} is what it does anyway), {@code background: true},
	 * {@code truncation: "auto"}, and every field outside the ones it maps.
	 */
	private static void refuseUnkept(JsonNode body, String field, JsonNode value) {
		switch (field) {
			case "model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "tools", "tool_choice",
					"metadata", "user", "stream", "stream_options", "parallel_tool_calls" -> {
			}
			case "store" -> {
				if (OpenAiRequestReader.flag(body, field, field)) {
					throw new WireFormatException("'store': true is not supported: the gateway stores no responses "
							+ "(nothing could be retrieved or continued with previous_response_id). Send 'store': false "
							+ "or leave it out.", field);
				}
			}
			case "background" -> {
				if (OpenAiRequestReader.flag(body, field, field)) {
					throw new WireFormatException("'background': true is not supported: the gateway answers while the "
							+ "client waits, and keeps no response to poll. Leave 'background' out.", field);
				}
			}
			case "truncation" -> {
				if (!value.isString() || !"disabled".equals(value.stringValue())) {
					throw new WireFormatException("'truncation' must be \"disabled\" (the default): the gateway does not "
							+ "truncate input to fit a model's context", field);
				}
			}
			default -> {
				String reason = NOT_KEPT.get(field);
				throw new WireFormatException("'" + field + "' is not supported by this gateway's Responses API: "
						+ ((reason != null) ? reason : "it is not a field the gateway maps, so it could not be honoured; "
								+ "leave it out"),
						field);
			}
		}
	}

	private static boolean has(JsonNode node, String field) {
		return node.has(field) && !node.get(field).isNull();
	}

	private static void streamOptions(@Nullable JsonNode options, boolean stream) {
		if (options == null || options.isNull()) {
			return;
		}
		if (!options.isObject()) {
			throw new WireFormatException("'stream_options' must be an object such as {\"include_obfuscation\": false}",
					"stream_options");
		}
		for (Map.Entry<String, JsonNode> option : options.properties()) {
			String path = "stream_options." + option.getKey();
			if (!option.getKey().equals("include_obfuscation")) {
				throw new WireFormatException("'" + path + "' is not supported: the only stream option is include_obfuscation",
						path);
			}
			OpenAiRequestReader.flag(options, option.getKey(), path);
		}
		if (!stream) {
			throw new WireFormatException("'stream_options' is only for a stream: send 'stream': true, or leave it out",
					"stream_options");
		}
	}

	private List<ChatMessage> input(@Nullable JsonNode input) {
		if (input == null || input.isNull()) {
			throw new WireFormatException("'input' is required: a string, or an array of message items", "input");
		}
		if (input.isString()) {
			return List.of(ChatMessage.user(input.stringValue()));
		}
		if (!input.isArray() || input.isEmpty()) {
			throw new WireFormatException("'input' must be a string or a non-empty array of items", "input");
		}
		List<ChatMessage> messages = new ArrayList<>();
		Map<String, String> callNames = new HashMap<>();
		for (int i = 0; i < input.size(); i++) {
			JsonNode item = input.get(i);
			String path = "input[" + i + "]";
			if (!item.isObject()) {
				throw new WireFormatException(path + " must be an object (a message, function_call or function_call_output item)",
						path);
			}
			String type = OpenAiRequestReader.optionalText(item, "type", path);
			if (type == null || type.equals("message")) {
				messages.add(message(item, path));
			}
			else if (type.equals("function_call")) {
				ToolCall call = functionCall(item, path);
				callNames.put(call.id(), call.name());
				addCall(messages, call);
			}
			else if (type.equals("function_call_output")) {
				messages.add(functionCallOutput(item, path, callNames));
			}
			else if (type.equals("item_reference")) {
				throw new WireFormatException(path + ".type 'item_reference' is not supported: the gateway keeps no "
						+ "items to refer to: send the items themselves (a client that sends references when it "
						+ "believes responses are stored, as the Vercel AI SDK does, is told otherwise by 'store': false)",
						path + ".type");
			}
			else {
				throw new WireFormatException(path + ".type '" + type + "' is not supported: the gateway reads message, "
						+ "function_call and function_call_output items (it keeps no stored items and runs no built-in tools)",
						path + ".type");
			}
		}
		return messages;
	}

	private static ChatMessage message(JsonNode item, String path) {
		allowOnly(item, path, Set.of("type", "role", "content"));
		String role = OpenAiRequestReader.optionalText(item, "role", path);
		if (role == null || !ROLES.contains(role)) {
			throw new WireFormatException(path + ".role must be one of " + ROLES, path + ".role");
		}
		JsonNode content = item.get("content");
		String contentPath = path + ".content";
		if (content != null && content.isString()) {
			return new ChatMessage(role, content.stringValue());
		}
		if (content == null || !content.isArray() || content.isEmpty()) {
			throw new WireFormatException(contentPath + " must be a string or a non-empty array of content parts", contentPath);
		}
		List<ContentPart> parts = new ArrayList<>();
		for (int j = 0; j < content.size(); j++) {
			parts.add(part(content.get(j), contentPath + "[" + j + "]"));
		}
		if (ChatMessage.ASSISTANT.equals(role)) {
			// an assistant's earlier answer goes upstream as its text, as every protocol takes it
			StringBuilder text = new StringBuilder();
			for (ContentPart part : parts) {
				if (!(part instanceof ContentPart.Text written)) {
					throw new WireFormatException(contentPath + " of an assistant message must be text parts", contentPath);
				}
				text.append(written.text());
			}
			return new ChatMessage(role, text.toString());
		}
		return new ChatMessage(role, null, parts, List.of(), null, null);
	}

	private static ContentPart part(JsonNode part, String path) {
		if (!part.isObject()) {
			throw new WireFormatException(path + " must be a content part object", path);
		}
		String type = OpenAiRequestReader.optionalText(part, "type", path);
		if ("input_text".equals(type) || "output_text".equals(type)) {
			allowOnly(part, path, "input_text".equals(type) ? Set.of("type", "text")
					: Set.of("type", "text", "annotations", "logprobs"));
			String text = OpenAiRequestReader.optionalText(part, "text", path);
			if (text == null) {
				throw new WireFormatException(path + ".text is required", path + ".text");
			}
			return ContentPart.text(text);
		}
		if ("input_image".equals(type)) {
			allowOnly(part, path, Set.of("type", "image_url", "detail"));
			String url = OpenAiRequestReader.optionalText(part, "image_url", path);
			if (url == null) {
				throw new WireFormatException(path + ".image_url is required: the gateway keeps no files, so file_id "
						+ "cannot be read", path + ".image_url");
			}
			return new ContentPart.ImageUrl(url, OpenAiRequestReader.optionalText(part, "detail", path));
		}
		throw new WireFormatException(path + ".type '" + type + "' is not supported: use input_text, output_text or "
				+ "input_image (with an image_url) parts", path + ".type");
	}

	private static ToolCall functionCall(JsonNode item, String path) {
		allowOnly(item, path, Set.of("type", "call_id", "name", "arguments"));
		String callId = required(item, "call_id", path);
		String name = required(item, "name", path);
		String arguments = OpenAiRequestReader.optionalText(item, "arguments", path);
		return new ToolCall(callId, name, (arguments != null) ? arguments : "");
	}

	/** Calls in a row are one assistant turn, as chat completions has them; after its text, the same turn. */
	private static void addCall(List<ChatMessage> messages, ToolCall call) {
		ChatMessage last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
		if (last != null && ChatMessage.ASSISTANT.equals(last.role()) && last.parts().isEmpty()) {
			List<ToolCall> calls = new ArrayList<>(last.toolCalls());
			calls.add(call);
			messages.set(messages.size() - 1, new ChatMessage(last.role(),
					(last.content() != null && !last.content().isEmpty()) ? last.content() : null, List.of(), calls,
					null, last.name()));
			return;
		}
		messages.add(new ChatMessage(ChatMessage.ASSISTANT, null, List.of(), List.of(call), null, null));
	}

	private static ChatMessage functionCallOutput(JsonNode item, String path, Map<String, String> callNames) {
		allowOnly(item, path, Set.of("type", "call_id", "output"));
		String callId = required(item, "call_id", path);
		JsonNode output = item.get("output");
		String text;
		if (output != null && output.isString()) {
			text = output.stringValue();
		}
		else if (output != null && output.isArray()) {
			StringBuilder joined = new StringBuilder();
			for (int j = 0; j < output.size(); j++) {
				String partPath = path + ".output[" + j + "]";
				JsonNode part = output.get(j);
				if (!part.isObject() || !"input_text".equals(OpenAiRequestReader.text(part, "type"))) {
					throw new WireFormatException(partPath + " must be an input_text part", partPath);
				}
				allowOnly(part, partPath, Set.of("type", "text"));
				joined.append(required(part, "text", partPath));
			}
			text = joined.toString();
		}
		else {
			throw new WireFormatException(path + ".output must be a string or an array of input_text parts",
					path + ".output");
		}
		return new ChatMessage(ChatMessage.TOOL, text, List.of(), List.of(), callId, callNames.get(callId));
	}

	private List<Tool> tools(@Nullable JsonNode tools) {
		if (tools == null || tools.isNull()) {
			return List.of();
		}
		if (!tools.isArray()) {
			throw new WireFormatException("'tools' must be an array", "tools");
		}
		List<Tool> result = new ArrayList<>();
		for (int i = 0; i < tools.size(); i++) {
			JsonNode tool = tools.get(i);
			String path = "tools[" + i + "]";
			if (!tool.isObject()) {
				throw new WireFormatException(path + " must be a function tool object", path);
			}
			String type = OpenAiRequestReader.optionalText(tool, "type", path);
			if (!"function".equals(type)) {
				throw new WireFormatException(path + ".type '" + type + "' is not supported: the gateway runs no built-in "
						+ "tools (web search, file search, code interpreter, computer use, image generation, MCP...); "
						+ "only function tools, which the client runs", path + ".type");
			}
			allowOnly(tool, path, Set.of("type", "name", "description", "parameters", "strict"));
			String name = required(tool, "name", path);
			JsonNode parameters = tool.get("parameters");
			if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
				throw new WireFormatException(path + ".parameters must be a JSON Schema object", path + ".parameters");
			}
			JsonNode strict = tool.get("strict");
			if (strict != null && !strict.isNull() && !strict.isBoolean()) {
				throw new WireFormatException(path + ".strict must be true or false", path + ".strict");
			}
			result.add(new Tool(name, OpenAiRequestReader.optionalText(tool, "description", path),
					(parameters != null && parameters.isObject()) ? this.mapper.writeValueAsString(parameters) : null,
					(strict != null && strict.isBoolean()) ? strict.booleanValue() : null));
		}
		return result;
	}

	private static @Nullable ToolChoice toolChoice(@Nullable JsonNode choice) {
		if (choice == null || choice.isNull()) {
			return null;
		}
		if (choice.isString()) {
			return switch (choice.stringValue()) {
				case "auto" -> ToolChoice.auto();
				case "none" -> ToolChoice.none();
				case "required" -> ToolChoice.required();
				default -> throw new WireFormatException("'tool_choice' must be auto, none, required or "
						+ "{\"type\":\"function\",\"name\":...}", "tool_choice");
			};
		}
		String type = choice.isObject() ? OpenAiRequestReader.text(choice, "type") : null;
		if (!"function".equals(type)) {
			throw new WireFormatException("'tool_choice' must be auto, none, required or {\"type\":\"function\",\"name\":...} "
					+ "(the gateway runs no built-in tools, and does not restrict to allowed tools)", "tool_choice");
		}
		allowOnly(choice, "tool_choice", Set.of("type", "name"));
		return ToolChoice.function(required(choice, "name", "tool_choice"));
	}

	/** The metadata as sent: an object of strings, as OpenAI's is. */
	private static Map<String, Object> metadata(@Nullable JsonNode metadata) {
		if (metadata == null || metadata.isNull()) {
			return Map.of();
		}
		if (!metadata.isObject()) {
			throw new WireFormatException("'metadata' must be an object of strings", "metadata");
		}
		Map<String, Object> values = new LinkedHashMap<>();
		for (Map.Entry<String, JsonNode> entry : metadata.properties()) {
			if (!entry.getValue().isString()) {
				String path = "metadata." + entry.getKey();
				throw new WireFormatException("'" + path + "' must be a string", path);
			}
			values.put(entry.getKey(), entry.getValue().stringValue());
		}
		return values;
	}

	private static String required(JsonNode node, String field, String parent) {
		String value = OpenAiRequestReader.optionalText(node, field, parent);
		if (value == null) {
			throw new WireFormatException(parent + "." + field + " is required (a string)", parent + "." + field);
		}
		return value;
	}

	/** A field of an item or part the gateway does not map is refused by name, not dropped. */
	private static void allowOnly(JsonNode node, String path, Set<String> fields) {
		for (Map.Entry<String, JsonNode> field : node.properties()) {
			if (!fields.contains(field.getKey()) && !ECHOED.contains(field.getKey()) && !field.getValue().isNull()) {
				String at = path + "." + field.getKey();
				throw new WireFormatException("'" + at + "' is not supported by this gateway's Responses API: leave it out",
						at);
			}
		}
	}

}
