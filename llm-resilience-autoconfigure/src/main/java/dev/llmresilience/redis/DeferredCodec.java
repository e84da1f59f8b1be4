package dev.llmresilience.redis;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatMessage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.ContentPart;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Priority;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.spi.DeferredStore.DeferredEntry;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Deferred entries as JSON in Redis, readable with {@code redis-cli}, in a format of their own,
 * written field by field and versioned ({@code "v": 1}), so that every request shape round-trips
 * (content parts with their type, tool calls, tool results, tools, the tool choice, extra fields,
 * every {@link ChatRequest} field) and a replica reads exactly what another wrote, whatever the
 * records' own shape becomes. Every field is written, {@code null} where absent; reading is strict:
 * an unknown version, a missing field or a value of the wrong type makes the entry unreadable
 * ({@link IllegalArgumentException} naming the field, never quoting its value: it may be a prompt).
 */
final class DeferredCodec {

	/** The format's version, written as {@code v}. */
	static final int VERSION = 1;

	private static final String TEXT = "text";

	private static final String IMAGE_URL = "image_url";

	private final JsonMapper mapper = JsonMapper.builder().build();

	String write(DeferredEntry entry) {
		ObjectNode root = this.mapper.createObjectNode();
		root.put("v", VERSION);
		root.put("ticket", entry.ticket());
		root.put("state", entry.state().name());
		root.put("attempts", entry.attempts());
		root.put("createdAt", entry.createdAt().toString());
		root.put("updatedAt", entry.updatedAt().toString());
		root.put("reason", entry.reason());
		root.set("request", request(entry.request()));
		root.set("response", (entry.response() != null) ? response(entry.response()) : null);
		return this.mapper.writeValueAsString(root);
	}

	DeferredEntry read(String json) {
		JsonNode root;
		try {
			root = this.mapper.readTree(json);
		}
		catch (JacksonException ex) {
			throw new IllegalArgumentException("it is not JSON");
		}
		Fields entry = new Fields(root, "the entry");
		int version = entry.integer("v");
		if (version != VERSION) {
			throw new IllegalArgumentException("its format version is " + version + ", this replica reads " + VERSION
					+ " (a newer replica wrote it?)");
		}
		try {
			JsonNode response = entry.nullable("response");
			return new DeferredEntry(entry.string("ticket"), request(entry.object("request")),
					entry.constant("state", DeferredResult.State::valueOf), entry.integer("attempts"),
					(response != null) ? response(new Fields(response, "response")) : null,
					entry.nullableString("reason"), entry.instant("createdAt"), entry.instant("updatedAt"));
		}
		catch (RuntimeException ex) {
			// the records' own checks too (a message with both content and parts, a tool without a name)
			throw (ex instanceof IllegalArgumentException) ? ex : new IllegalArgumentException(String.valueOf(ex.getMessage()));
		}
	}

	private ObjectNode request(ChatRequest request) {
		ObjectNode node = this.mapper.createObjectNode();
		ArrayNode messages = node.putArray("messages");
		request.messages().forEach((message) -> messages.add(message(message)));
		node.put("route", request.route());
		node.put("temperature", request.temperature());
		node.put("maxTokens", request.maxTokens());
		node.set("extra", this.mapper.valueToTree(request.extra()));
		node.put("timeout", (request.timeout() != null) ? request.timeout().toString() : null);
		node.put("deadline", (request.deadline() != null) ? request.deadline().toString() : null);
		node.put("deferrable", request.deferrable());
		node.put("cacheScope", request.cacheScope());
		node.put("priority", request.priority().name());
		ArrayNode tools = node.putArray("tools");
		for (Tool tool : request.tools()) {
			tools.addObject()
				.put("name", tool.name())
				.put("description", tool.description())
				.put("parameters", tool.parameters())
				.put("strict", tool.strict());
		}
		ToolChoice choice = request.toolChoice();
		node.set("toolChoice", (choice != null) ? this.mapper.createObjectNode()
			.put("mode", choice.mode().name())
			.put("function", choice.function()) : null);
		return node;
	}

	private ChatRequest request(Fields node) {
		ChatRequest.Builder builder = ChatRequest.builder()
			.messages(node.list("messages", this::message))
			.route(node.nullableString("route"))
			.temperature(node.nullableDouble("temperature"))
			.maxTokens(node.nullableInteger("maxTokens"))
			.timeout(node.nullableDuration("timeout"))
			.deadline(node.nullableDuration("deadline"))
			.deferrable(node.bool("deferrable"))
			.cacheScope(node.nullableString("cacheScope"))
			.tools(node.list("tools", (tool) -> new Tool(tool.string("name"), tool.nullableString("description"),
					tool.nullableString("parameters"), tool.nullableBool("strict"))));
		extra(node.object("extra")).forEach(builder::extra);
		// the one field an entry of format 1 may lack: a replica that knew no priorities wrote it interactive
		if (node.node.has("priority")) {
			builder.priority(node.constant("priority", Priority::valueOf));
		}
		JsonNode choice = node.nullable("toolChoice");
		if (choice != null) {
			Fields fields = new Fields(choice, "request.toolChoice");
			builder.toolChoice(new ToolChoice(fields.constant("mode", ToolChoice.Mode::valueOf),
					fields.nullableString("function")));
		}
		return builder.build();
	}

	private Map<String, Object> extra(Fields extra) {
		if (!extra.node.isObject()) {
			throw new IllegalArgumentException("request.extra is not an object");
		}
		Map<String, Object> values = new LinkedHashMap<>();
		for (Map.Entry<String, JsonNode> field : extra.node.properties()) {
			values.put(field.getKey(), this.mapper.treeToValue(field.getValue(), Object.class));
		}
		return values;
	}

	private ObjectNode message(ChatMessage message) {
		ObjectNode node = this.mapper.createObjectNode().put("role", message.role()).put("content", message.content());
		ArrayNode parts = node.putArray("parts");
		for (ContentPart part : message.parts()) {
			if (part instanceof ContentPart.Text text) {
				parts.addObject().put("type", TEXT).put("text", text.text());
			}
			else if (part instanceof ContentPart.ImageUrl image) {
				parts.addObject().put("type", IMAGE_URL).put("url", image.url()).put("detail", image.detail());
			}
		}
		node.set("toolCalls", toolCalls(message.toolCalls()));
		node.put("toolCallId", message.toolCallId());
		node.put("name", message.name());
		return node;
	}

	private ChatMessage message(Fields node) {
		return new ChatMessage(node.string("role"), node.nullableString("content"), node.list("parts", this::part),
				node.list("toolCalls", this::toolCall), node.nullableString("toolCallId"), node.nullableString("name"));
	}

	private ContentPart part(Fields node) {
		String type = node.string("type");
		return switch (type) {
			case TEXT -> new ContentPart.Text(node.string("text"));
			case IMAGE_URL -> new ContentPart.ImageUrl(node.string("url"), node.nullableString("detail"));
			default -> throw new IllegalArgumentException(node.path + ".type is not 'text' or 'image_url'");
		};
	}

	private ArrayNode toolCalls(List<ToolCall> calls) {
		ArrayNode nodes = this.mapper.createArrayNode();
		calls.forEach((call) -> nodes.addObject()
			.put("id", call.id())
			.put("name", call.name())
			.put("arguments", call.arguments()));
		return nodes;
	}

	private ToolCall toolCall(Fields node) {
		return new ToolCall(node.string("id"), node.string("name"), node.string("arguments"));
	}

	private ObjectNode response(ChatResponse response) {
		ObjectNode node = this.mapper.createObjectNode()
			.put("content", response.content())
			.put("endpoint", response.endpoint())
			.put("model", response.model())
			.put("tier", response.tier().name())
			.put("finishReason", response.finishReason());
		node.set("toolCalls", toolCalls(response.toolCalls()));
		Usage usage = response.usage();
		node.set("usage", (usage != null) ? this.mapper.createObjectNode()
			.put("promptTokens", usage.promptTokens())
			.put("completionTokens", usage.completionTokens()) : null);
		node.put("cost", (response.cost() != null) ? response.cost().toPlainString() : null);
		node.put("latency", response.latency().toString());
		ArrayNode attempts = node.putArray("attempts");
		response.attempts().forEach((attempt) -> attempts.addObject()
			.put("endpoint", attempt.endpoint())
			.put("outcome", attempt.outcome().name())
			.put("duration", attempt.duration().toString()));
		node.put("ticket", response.ticket());
		node.put("age", (response.age() != null) ? response.age().toString() : null);
		return node;
	}

	private ChatResponse response(Fields node) {
		JsonNode usage = node.nullable("usage");
		Fields usageFields = (usage != null) ? new Fields(usage, "response.usage") : null;
		String cost = node.nullableString("cost");
		return ChatResponse.builder()
			.content(node.string("content"))
			.endpoint(node.nullableString("endpoint"))
			.model(node.nullableString("model"))
			.tier(node.constant("tier", Tier::valueOf))
			.finishReason(node.nullableString("finishReason"))
			.toolCalls(node.list("toolCalls", this::toolCall))
			.usage((usageFields != null) ? new Usage(usageFields.nullableInteger("promptTokens"),
					usageFields.nullableInteger("completionTokens")) : null)
			.cost((cost != null) ? decimal(cost) : null)
			.latency(node.duration("latency"))
			.attempts(node.list("attempts", (attempt) -> new Attempt(attempt.string("endpoint"),
					attempt.constant("outcome", Outcome::valueOf), attempt.duration("duration"))))
			.ticket(node.nullableString("ticket"))
			.age(node.nullableDuration("age"))
			.build();
	}

	private static BigDecimal decimal(String cost) {
		try {
			return new BigDecimal(cost);
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("response.cost is not a decimal number");
		}
	}

	/** The fields of one JSON object, each read strictly; errors name the field by its path. */
	private static final class Fields {

		private final JsonNode node;

		private final String path;

		Fields(JsonNode node, String path) {
			if (!node.isObject()) {
				throw new IllegalArgumentException(path + " is not an object");
			}
			this.node = node;
			this.path = path;
		}

		private String name(String field) {
			return "the entry".equals(this.path) ? field : this.path + "." + field;
		}

		/** The field's value, {@code null} when it is JSON null; a field that is not there is an error. */
		@Nullable JsonNode nullable(String field) {
			JsonNode value = this.node.get(field);
			if (value == null) {
				throw new IllegalArgumentException(name(field) + " is missing");
			}
			return value.isNull() ? null : value;
		}

		JsonNode required(String field) {
			JsonNode value = nullable(field);
			if (value == null) {
				throw new IllegalArgumentException(name(field) + " is null");
			}
			return value;
		}

		Fields object(String field) {
			return new Fields(required(field), name(field));
		}

		@Nullable String nullableString(String field) {
			JsonNode value = nullable(field);
			if (value != null && !value.isString()) {
				throw new IllegalArgumentException(name(field) + " is not a string");
			}
			return (value != null) ? value.stringValue() : null;
		}

		String string(String field) {
			String value = nullableString(field);
			if (value == null) {
				throw new IllegalArgumentException(name(field) + " is null");
			}
			return value;
		}

		@Nullable Integer nullableInteger(String field) {
			JsonNode value = nullable(field);
			if (value != null && !(value.isIntegralNumber() && value.canConvertToInt())) {
				throw new IllegalArgumentException(name(field) + " is not an integer");
			}
			return (value != null) ? value.intValue() : null;
		}

		int integer(String field) {
			Integer value = nullableInteger(field);
			if (value == null) {
				throw new IllegalArgumentException(name(field) + " is null");
			}
			return value;
		}

		@Nullable Double nullableDouble(String field) {
			JsonNode value = nullable(field);
			if (value != null && !value.isNumber()) {
				throw new IllegalArgumentException(name(field) + " is not a number");
			}
			return (value != null) ? value.doubleValue() : null;
		}

		@Nullable Boolean nullableBool(String field) {
			JsonNode value = nullable(field);
			if (value != null && !value.isBoolean()) {
				throw new IllegalArgumentException(name(field) + " is not true or false");
			}
			return (value != null) ? value.booleanValue() : null;
		}

		boolean bool(String field) {
			Boolean value = nullableBool(field);
			if (value == null) {
				throw new IllegalArgumentException(name(field) + " is null");
			}
			return value;
		}

		<T> T constant(String field, Function<String, T> valueOf) {
			String value = string(field);
			try {
				return valueOf.apply(value);
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalArgumentException(name(field) + " is not one of the known values");
			}
		}

		Instant instant(String field) {
			try {
				return Instant.parse(string(field));
			}
			catch (java.time.format.DateTimeParseException ex) {
				throw new IllegalArgumentException(name(field) + " is not an ISO-8601 instant");
			}
		}

		@Nullable Duration nullableDuration(String field) {
			String value = nullableString(field);
			try {
				return (value != null) ? Duration.parse(value) : null;
			}
			catch (java.time.format.DateTimeParseException ex) {
				throw new IllegalArgumentException(name(field) + " is not an ISO-8601 duration");
			}
		}

		Duration duration(String field) {
			Duration value = nullableDuration(field);
			if (value == null) {
				throw new IllegalArgumentException(name(field) + " is null");
			}
			return value;
		}

		<T> List<T> list(String field, Function<Fields, T> element) {
			JsonNode value = required(field);
			if (!value.isArray()) {
				throw new IllegalArgumentException(name(field) + " is not an array");
			}
			List<T> elements = new ArrayList<>();
			int i = 0;
			for (JsonNode item : value.values()) {
				elements.add(element.apply(new Fields(item, name(field) + "[" + i++ + "]")));
			}
			return elements;
		}

	}

}
