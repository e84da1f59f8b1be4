package dev.llmresilience.openaiapi;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.Priority;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolChoice;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Reads the body of an OpenAI chat-completions request into a {@link ChatRequest}: what the
 * project models (messages, temperature, {@code max_tokens}, tools, tool choice) into its fields,
 * every other field into {@code extra} as it is. A field it reads must have the type OpenAI gives
 * it ({@code null} counts as absent): nothing is coerced, a {@code "stream": "true"} is refused
 * rather than read as no stream. Each refusal names the field.
 */
final class OpenAiRequestReader {

	/** Fields the reader consumes; the others pass through in extra. */
	private static final Set<String> CONSUMED = Set.of("model", "messages", "temperature", "max_tokens", "stream",
			"stream_options", "tools", "tool_choice", "n");

	/** The request header that says a call's priority: {@code interactive} or {@code batch}. */
	static final String PRIORITY_HEADER = "x-llm-priority";

	private static final String PRIORITY = "priority";

	private static final String METADATA_PRIORITY = "metadata.priority";

	private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");

	private final JsonMapper mapper;

	OpenAiRequestReader(JsonMapper mapper) {
		this.mapper = mapper;
	}

	/**
	 * Read a body.
	 * @param body the body
	 * @param priorityHeader the request's {@value #PRIORITY_HEADER} header, or {@code null} when absent
	 * @return the request
	 */
	OpenAiApiRequest read(JsonNode body, @Nullable String priorityHeader) {
		if (!body.isObject()) {
			throw new WireFormatException("The request body must be a JSON object", null);
		}
		for (String deprecated : List.of("functions", "function_call")) {
			if (body.has(deprecated)) {
				throw new WireFormatException("'" + deprecated + "' is not supported: use 'tools' and 'tool_choice'",
						deprecated);
			}
		}
		JsonNode n = body.get("n");
		if (n != null && !n.isNull() && !(n.isIntegralNumber() && n.intValue() == 1)) {
			throw new WireFormatException("Only n=1 is supported: the gateway answers with one choice", "n");
		}
		ChatRequest.Builder builder = ChatRequest.builder()
			.messages(messages(body.get("messages")))
			.temperature(number(body, "temperature"))
			.maxTokens(integer(body, "max_tokens"))
			.tools(tools(body.get("tools")))
			.toolChoice(toolChoice(body.get("tool_choice")));
		for (Map.Entry<String, JsonNode> field : body.properties()) {
			if (!CONSUMED.contains(field.getKey()) && !field.getValue().isNull()) {
				JsonNode value = field.getKey().equals("metadata") ? withoutPriority(field.getValue()) : field.getValue();
				if (value != null) {
					builder.extra(field.getKey(), this.mapper.treeToValue(value, Object.class));
				}
			}
		}
		builder.priority(priority(priorityHeader, body.get("metadata")));
		builder.route(route(body));
		boolean stream = flag(body, "stream", "stream");
		JsonNode options = body.get("stream_options");
		if (options != null && !options.isNull() && !options.isObject()) {
			throw new WireFormatException("'stream_options' must be an object such as {\"include_usage\": true}",
					"stream_options");
		}
		boolean includeUsage = (options != null) && flag(options, "include_usage", "stream_options.include_usage");
		try {
			return new OpenAiApiRequest(builder.build(), stream, includeUsage);
		}
		catch (IllegalArgumentException ex) {
			throw new WireFormatException(ex.getMessage(), null);
		}
	}

	private List<ChatMessage> messages(@Nullable JsonNode messages) {
		if (messages == null || !messages.isArray() || messages.isEmpty()) {
			throw new WireFormatException("'messages' must be a non-empty array", "messages");
		}
		List<ChatMessage> result = new ArrayList<>();
		for (int i = 0; i < messages.size(); i++) {
			result.add(message(messages.get(i), "messages[" + i + "]"));
		}
		return result;
	}

	private ChatMessage message(JsonNode message, String path) {
		if (!message.isObject()) {
			throw new WireFormatException(path + " must be an object with a role", path);
		}
		String role = text(message, "role");
		if (role == null || !ROLES.contains(role)) {
			throw new WireFormatException(path + ".role must be one of " + ROLES, path + ".role");
		}
		JsonNode content = message.get("content");
		String text = null;
		List<ContentPart> parts = List.of();
		if (content != null && content.isString()) {
			text = content.stringValue();
		}
		else if (content != null && content.isArray()) {
			parts = parts(content, path + ".content");
		}
		else if (content != null && !content.isNull()) {
			throw new WireFormatException(path + ".content must be a string, an array of parts or null", path + ".content");
		}
		List<ToolCall> calls = toolCalls(message.get("tool_calls"), path + ".tool_calls");
		String toolCallId = optionalText(message, "tool_call_id", path);
		String name = optionalText(message, "name", path);
		try {
			return new ChatMessage(role, text, parts, calls, toolCallId, name);
		}
		catch (IllegalArgumentException ex) {
			throw new WireFormatException(path + ": " + ex.getMessage(), path);
		}
	}

	private static List<ContentPart> parts(JsonNode content, String path) {
		List<ContentPart> parts = new ArrayList<>();
		for (int i = 0; i < content.size(); i++) {
			JsonNode part = content.get(i);
			String partPath = path + "[" + i + "]";
			String type = text(part, "type");
			if ("text".equals(type) && part.path("text").isString()) {
				parts.add(ContentPart.text(part.get("text").stringValue()));
			}
			else if ("image_url".equals(type) && part.path("image_url").path("url").isString()) {
				JsonNode image = part.get("image_url");
				parts.add(new ContentPart.ImageUrl(image.get("url").stringValue(),
						optionalText(image, "detail", partPath + ".image_url")));
			}
			else {
				throw new WireFormatException(partPath + " must be a text or image_url part (type '" + type
						+ "' is not supported)", partPath);
			}
		}
		return parts;
	}

	private static List<ToolCall> toolCalls(@Nullable JsonNode calls, String path) {
		if (calls == null || calls.isNull()) {
			return List.of();
		}
		if (!calls.isArray()) {
			throw new WireFormatException(path + " must be an array", path);
		}
		List<ToolCall> result = new ArrayList<>();
		for (int i = 0; i < calls.size(); i++) {
			JsonNode call = calls.get(i);
			String callPath = path + "[" + i + "]";
			JsonNode function = call.path("function");
			String id = optionalText(call, "id", callPath);
			String name = optionalText(function, "name", callPath + ".function");
			if (id == null || name == null) {
				throw new WireFormatException(callPath + " needs an id and a function name", callPath);
			}
			String arguments = optionalText(function, "arguments", callPath + ".function");
			result.add(new ToolCall(id, name, (arguments != null) ? arguments : ""));
		}
		return result;
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
			JsonNode function = tool.path("function");
			String name = text(function, "name");
			if (!"function".equals(text(tool, "type")) || name == null || name.isBlank()) {
				throw new WireFormatException(path + " must be a function tool with a name", path);
			}
			JsonNode parameters = function.get("parameters");
			if (parameters != null && !parameters.isNull() && !parameters.isObject()) {
				throw new WireFormatException(path + ".function.parameters must be a JSON Schema object",
						path + ".function.parameters");
			}
			JsonNode strict = function.get("strict");
			if (strict != null && !strict.isNull() && !strict.isBoolean()) {
				throw new WireFormatException(path + ".function.strict must be true or false", path + ".function.strict");
			}
			result.add(new Tool(name, optionalText(function, "description", path + ".function"),
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
				default -> throw new WireFormatException("'tool_choice' must be auto, none, required or a function",
						"tool_choice");
			};
		}
		String name = text(choice.path("function"), "name");
		if (!"function".equals(text(choice, "type")) || name == null) {
			throw new WireFormatException("'tool_choice' must be auto, none, required or {\"type\":\"function\",...}",
					"tool_choice");
		}
		return ToolChoice.function(name);
	}

	/**
	 * The call's priority: the {@value #PRIORITY_HEADER} header or the body's {@code metadata.priority},
	 * {@code interactive} when neither is sent; both may be sent if they agree.
	 */
	static @Nullable Priority priority(@Nullable String header, @Nullable JsonNode metadata) {
		Priority fromHeader;
		try {
			fromHeader = (header != null) ? Priority.parse(header, PRIORITY_HEADER) : null;
		}
		catch (IllegalArgumentException ex) {
			throw new WireFormatException("The " + ex.getMessage() + " header", PRIORITY_HEADER);
		}
		JsonNode value = (metadata != null && metadata.isObject()) ? metadata.get(PRIORITY) : null;
		if (value == null || value.isNull()) {
			return fromHeader;
		}
		if (!value.isString()) {
			throw new WireFormatException("'" + METADATA_PRIORITY + "' must be \"interactive\" or \"batch\" (a string)",
					METADATA_PRIORITY);
		}
		Priority fromBody;
		try {
			fromBody = Priority.parse(value.stringValue(), METADATA_PRIORITY);
		}
		catch (IllegalArgumentException ex) {
			throw new WireFormatException(ex.getMessage(), METADATA_PRIORITY);
		}
		if (fromHeader != null && fromHeader != fromBody) {
			throw new WireFormatException("The " + PRIORITY_HEADER + " header says " + fromHeader.wireName() + " and '"
					+ METADATA_PRIORITY + "' says " + fromBody.wireName() + ": send one, or the same in both",
					METADATA_PRIORITY);
		}
		return fromBody;
	}

	// The gateway's own key is not sent upstream; a metadata left empty is not sent at all.
	static @Nullable JsonNode withoutPriority(JsonNode metadata) {
		if (!metadata.isObject() || !metadata.has(PRIORITY)) {
			return metadata;
		}
		ObjectNode rest = ((ObjectNode) metadata).deepCopy();
		rest.remove(PRIORITY);
		return rest.isEmpty() ? null : rest;
	}

	/** The route the body's {@code model} names: absent or null is the default route, blank is refused. */
	static @Nullable String route(JsonNode body) {
		JsonNode model = body.get("model");
		if (model == null || model.isNull()) {
			return null;
		}
		if (!model.isString()) {
			throw new WireFormatException("'model' must be a string naming a route, or be left out for the default route",
					"model");
		}
		if (model.stringValue().isBlank()) {
			throw new WireFormatException("'model' is blank: name a route, or leave 'model' out for the default route",
					"model");
		}
		return model.stringValue();
	}

	static boolean flag(JsonNode node, String field, String path) {
		JsonNode value = node.get(field);
		if (value == null || value.isNull()) {
			return false;
		}
		if (!value.isBoolean()) {
			throw new WireFormatException("'" + path + "' must be true or false (a JSON boolean, not a string or a number)",
					path);
		}
		return value.booleanValue();
	}

	/** A field that may be absent or null, else must be a string. */
	static @Nullable String optionalText(JsonNode node, String field, String parent) {
		JsonNode value = node.get(field);
		if (value == null || value.isNull()) {
			return null;
		}
		if (!value.isString()) {
			String path = parent.isEmpty() ? field : parent + "." + field;
			throw new WireFormatException(path + " must be a string", path);
		}
		return value.stringValue();
	}

	static @Nullable String text(JsonNode node, String field) {
		JsonNode value = node.get(field);
		return (value != null && value.isString()) ? value.stringValue() : null;
	}

	static @Nullable Double number(JsonNode body, String field) {
		JsonNode value = body.get(field);
		if (value == null || value.isNull()) {
			return null;
		}
		if (!value.isNumber()) {
			throw new WireFormatException("'" + field + "' must be a number", field);
		}
		return value.doubleValue();
	}

	static @Nullable Integer integer(JsonNode body, String field) {
		JsonNode value = body.get(field);
		if (value == null || value.isNull()) {
			return null;
		}
		if (!value.isIntegralNumber() || !value.canConvertToInt()) {
			throw new WireFormatException("'" + field + "' must be an integer", field);
		}
		return value.intValue();
	}

}
