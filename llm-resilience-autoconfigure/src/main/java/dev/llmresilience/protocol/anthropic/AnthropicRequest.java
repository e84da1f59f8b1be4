package dev.llmresilience.protocol.anthropic;

import java.lang.reflect.RecordComponent;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The body of {@code POST /v1/messages}. Fields left {@code null} are not sent; {@code extra} is
 * merged into the body as it is, and holds none of this record's own fields ({@link #FIELDS}): a
 * typed field wins over an extra one of the same name.
 *
 * @param model the model
 * @param maxTokens largest completion; the Messages API requires it
 * @param messages the conversation without its system messages
 * @param system the system prompt, or {@code null}
 * @param temperature sampling temperature, 0 to 1
 * @param stream whether to stream
 * @param tools the tools the model may call, or {@code null} for none
 * @param toolChoice whether and which tool the model must call, or {@code null} for Anthropic's default
 * @param extra fields passed through (already translated from OpenAI's names)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record AnthropicRequest(@JsonProperty("model") String model, @JsonProperty("max_tokens") int maxTokens,
		@JsonProperty("messages") List<Message> messages, @JsonProperty("system") @Nullable String system,
		@JsonProperty("temperature") @Nullable Double temperature, @JsonProperty("stream") @Nullable Boolean stream,
		@JsonProperty("tools") @Nullable List<Tool> tools, @JsonProperty("tool_choice") @Nullable ToolChoice toolChoice,
		@JsonAnyGetter Map<String, Object> extra) {

	/**
	 * The JSON names of this record's own fields, read from its components so that a field added here
	 * is kept out of {@code extra} at once (Jackson would otherwise write the name twice).
	 */
	static final Set<String> FIELDS = fields();

	private static Set<String> fields() {
		Set<String> names = new TreeSet<>();
		for (RecordComponent component : AnthropicRequest.class.getRecordComponents()) {
			try {
				JsonProperty property = AnthropicRequest.class.getDeclaredField(component.getName())
					.getAnnotation(JsonProperty.class);
				if (property != null) {
					names.add(property.value());
				}
			}
			catch (NoSuchFieldException ex) {
				throw new IllegalStateException("A record component always has its field", ex);
			}
		}
		return Set.copyOf(names);
	}

	/**
	 * One turn of the conversation. Turns alternate: consecutive messages of one role are one turn.
	 *
	 * @param role {@code user} or {@code assistant}
	 * @param content the text, or a list of {@link Block}s
	 */
	record Message(@JsonProperty("role") String role, @JsonProperty("content") Object content) {
	}

	/** A content block of a turn or of a tool result. */
	sealed interface Block permits Text, Image, ToolUse, ToolResult {
	}

	/**
	 * A text block; the Messages API refuses an empty one.
	 *
	 * @param type always {@code text}
	 * @param text the text
	 */
	record Text(@JsonProperty("type") String type, @JsonProperty("text") String text) implements Block {

		Text(String text) {
			this("text", text);
		}

	}

	/**
	 * An image block.
	 *
	 * @param type always {@code image}
	 * @param source where the image is
	 */
	record Image(@JsonProperty("type") String type, @JsonProperty("source") ImageSource source) implements Block {

		Image(ImageSource source) {
			this("image", source);
		}

	}

	/**
	 * An image by URL ({@code type: url}) or inline ({@code type: base64}, with its media type).
	 *
	 * @param type {@code url} or {@code base64}
	 * @param url the URL of a {@code url} source
	 * @param mediaType the media type of a {@code base64} source, e.g. {@code image/png}
	 * @param data the base64 data of a {@code base64} source
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record ImageSource(@JsonProperty("type") String type, @JsonProperty("url") @Nullable String url,
			@JsonProperty("media_type") @Nullable String mediaType, @JsonProperty("data") @Nullable String data) {
	}

	/**
	 * An assistant's tool call.
	 *
	 * @param type always {@code tool_use}
	 * @param id the call's id, which its result names
	 * @param name the tool's name
	 * @param input the arguments, a JSON object
	 */
	record ToolUse(@JsonProperty("type") String type, @JsonProperty("id") String id, @JsonProperty("name") String name,
			@JsonProperty("input") JsonNode input) implements Block {

		ToolUse(String id, String name, JsonNode input) {
			this("tool_use", id, name, input);
		}

	}

	/**
	 * The result of a tool call, in a user turn.
	 *
	 * @param type always {@code tool_result}
	 * @param toolUseId the id of the call it answers
	 * @param content the result as text, or as text and image blocks, or {@code null} for none
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record ToolResult(@JsonProperty("type") String type, @JsonProperty("tool_use_id") String toolUseId,
			@JsonProperty("content") @Nullable Object content) implements Block {

		ToolResult(String toolUseId, @Nullable Object content) {
			this("tool_result", toolUseId, content);
		}

	}

	/**
	 * A tool the model may call.
	 *
	 * @param name its name
	 * @param description what it does, or {@code null}
	 * @param inputSchema the JSON Schema of its input, a JSON object
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record Tool(@JsonProperty("name") String name, @JsonProperty("description") @Nullable String description,
			@JsonProperty("input_schema") Object inputSchema) {
	}

	/**
	 * Whether and which tool the model must call.
	 *
	 * @param type {@code auto}, {@code any}, {@code tool} or {@code none}
	 * @param name the tool of a {@code tool} choice
	 * @param disableParallelToolUse at most one tool call, or {@code null} for Anthropic's default
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record ToolChoice(@JsonProperty("type") String type, @JsonProperty("name") @Nullable String name,
			@JsonProperty("disable_parallel_tool_use") @Nullable Boolean disableParallelToolUse) {
	}

}
