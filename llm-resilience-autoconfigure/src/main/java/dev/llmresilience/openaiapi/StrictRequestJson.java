package dev.llmresilience.openaiapi;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonParser;
import tools.jackson.core.StreamReadFeature;
import tools.jackson.core.TokenStreamContext;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads a client's request body into a JSON tree only when the tree is what the client sent:
 * Jackson refuses duplicate keys ({@link StreamReadFeature#STRICT_DUPLICATE_DETECTION}; parsers
 * disagree on which one wins, so a proxy in front may have checked the other), {@code NaN} and
 * {@code Infinity} (not JSON) and anything after the value
 * ({@link DeserializationFeature#FAIL_ON_TRAILING_TOKENS}); a number too large for a double, which
 * Jackson would read as infinity and write as the string {@code "Infinity"}, is refused here. Each
 * refusal is a {@link WireFormatException} naming the field, as {@code messages[0].content}.
 */
final class StrictRequestJson {

	private final JsonMapper mapper = JsonMapper.builder()
		.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
		.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
		.build();

	/**
	 * Read a body.
	 * @param body the body's bytes
	 * @return the tree, never empty
	 * @throws WireFormatException naming the field that cannot be read faithfully
	 */
	JsonNode read(byte[] body) {
		JsonNode tree;
		try {
			tree = this.mapper.readTree(body);
		}
		catch (JacksonException ex) {
			throw refusal(ex);
		}
		if (tree == null || tree.isMissingNode()) {
			throw new WireFormatException("The request body is empty: send a chat-completions request as a JSON object",
					null);
		}
		requireFinite(tree, "");
		return tree;
	}

	private static WireFormatException refusal(JacksonException ex) {
		String path = (ex.processor() instanceof JsonParser parser) ? path(parser.streamReadContext()) : "";
		String original = String.valueOf(ex.getOriginalMessage());
		@Nullable String param = path.isEmpty() ? null : path;
		if (original.startsWith("Duplicate")) {
			return new WireFormatException("'" + path + "' appears more than once in the request body: send each field once",
					param);
		}
		if (original.startsWith("Non-standard token")) {
			return new WireFormatException("'" + path + "' is not a JSON number (NaN and Infinity are not JSON): send a "
					+ "finite number", param);
		}
		if (original.startsWith("Trailing token")) {
			return new WireFormatException("The request body goes on after its JSON value: send exactly one JSON object",
					null);
		}
		TokenStreamLocation location = ex.getLocation();
		String where = ((location != null) ? " at line " + location.getLineNr() + ", column " + location.getColumnNr() : "")
				+ ((param != null) ? " (near '" + param + "')" : "");
		// Jackson's advice to enable one of its features is meant for the server, not the client
		int advice = original.indexOf(" (enable ");
		String detail = (advice >= 0) ? original.substring(0, advice) : original;
		return new WireFormatException("The request body is not valid JSON" + where + ": " + detail, param);
	}

	/** The path of the parser's position, in the API's error style: {@code messages[0].content}. */
	private static String path(@Nullable TokenStreamContext context) {
		Deque<String> segments = new ArrayDeque<>();
		for (TokenStreamContext at = context; at != null && !at.inRoot(); at = at.getParent()) {
			if (at.inArray()) {
				segments.push("[" + Math.max(0, at.getCurrentIndex()) + "]");
			}
			else if (at.currentName() != null) {
				segments.push("." + at.currentName());
			}
		}
		String path = String.join("", segments);
		return path.startsWith(".") ? path.substring(1) : path;
	}

	private static void requireFinite(JsonNode node, String path) {
		if (node.isFloatingPointNumber() && !Double.isFinite(node.doubleValue())) {
			throw new WireFormatException("'" + path + "' is out of the range of a number (a double): send a finite number",
					path.isEmpty() ? null : path);
		}
		if (node.isObject()) {
			for (Map.Entry<String, JsonNode> field : node.properties()) {
				requireFinite(field.getValue(), path.isEmpty() ? field.getKey() : path + "." + field.getKey());
			}
		}
		else if (node.isArray()) {
			for (int i = 0; i < node.size(); i++) {
				requireFinite(node.get(i), path + "[" + i + "]");
			}
		}
	}

}
