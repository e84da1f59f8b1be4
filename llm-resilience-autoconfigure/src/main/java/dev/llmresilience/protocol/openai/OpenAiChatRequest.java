package dev.llmresilience.protocol.openai;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The body of {@code POST /chat/completions}. Fields left {@code null} are not sent; {@code extra}
 * is merged into the body as it is, and may not repeat any field of this record: each component's
 * JSON name is reserved ({@link ReservedFields}), so a field added here is reserved at once.
 *
 * @param model the model, or {@code null} where the path names it (Azure)
 * @param messages the conversation
 * @param temperature sampling temperature
 * @param maxTokens largest completion
 * @param stream whether to stream
 * @param streamOptions what a stream reports besides the answer
 * @param tools the functions the model may call
 * @param toolChoice {@code "auto"}, {@code "none"}, {@code "required"} or a {@link NamedToolChoice}
 * @param extra fields passed through
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record OpenAiChatRequest(@JsonProperty("model") @Nullable String model, @JsonProperty("messages") List<Message> messages,
		@JsonProperty("temperature") @Nullable Double temperature,
		@JsonProperty("max_tokens") @Nullable Integer maxTokens, @JsonProperty("stream") @Nullable Boolean stream,
		@JsonProperty("stream_options") @Nullable StreamOptions streamOptions,
		@JsonProperty("tools") @Nullable List<Tool> tools, @JsonProperty("tool_choice") @Nullable Object toolChoice,
		@JsonAnyGetter Map<String, Object> extra) {

	/**
	 * One message. {@code content} is a string, a list of {@link Part}s, or absent for an assistant
	 * message with only tool calls.
	 *
	 * @param role the role
	 * @param content the text or the parts
	 * @param name a participant name
	 * @param toolCalls an assistant message's function calls
	 * @param toolCallId a tool message's call id
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record Message(@JsonProperty("role") String role, @JsonProperty("content") @Nullable Object content,
			@JsonProperty("name") @Nullable String name,
			@JsonProperty("tool_calls") @Nullable List<OpenAiChatCompletion.ToolCall> toolCalls,
			@JsonProperty("tool_call_id") @Nullable String toolCallId) {
	}

	/**
	 * A content part: {@code text} or {@code image_url}.
	 *
	 * @param type the part's type
	 * @param text the text of a text part
	 * @param imageUrl the image of an image part
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record Part(@JsonProperty("type") String type, @JsonProperty("text") @Nullable String text,
			@JsonProperty("image_url") @Nullable ImageUrl imageUrl) {
	}

	/**
	 * An image by URL.
	 *
	 * @param url the URL
	 * @param detail the detail asked for
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record ImageUrl(@JsonProperty("url") String url, @JsonProperty("detail") @Nullable String detail) {
	}

	/**
	 * A function tool.
	 *
	 * @param type always {@code function}
	 * @param function the function
	 */
	record Tool(@JsonProperty("type") String type, @JsonProperty("function") FunctionDefinition function) {
	}

	/**
	 * A function's definition.
	 *
	 * @param name its name
	 * @param description what it does
	 * @param parameters the JSON Schema of its arguments
	 * @param strict whether the schema is enforced
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record FunctionDefinition(@JsonProperty("name") String name, @JsonProperty("description") @Nullable String description,
			@JsonProperty("parameters") @Nullable JsonNode parameters, @JsonProperty("strict") @Nullable Boolean strict) {
	}

	/**
	 * A tool choice that names a function.
	 *
	 * @param type always {@code function}
	 * @param function the function's name
	 */
	record NamedToolChoice(@JsonProperty("type") String type, @JsonProperty("function") FunctionName function) {
	}

	/**
	 * A function's name.
	 *
	 * @param name the name
	 */
	record FunctionName(@JsonProperty("name") String name) {
	}

	/**
	 * Options of a streamed request.
	 *
	 * @param includeUsage ask for a last chunk with the token counts
	 */
	record StreamOptions(@JsonProperty("include_usage") boolean includeUsage) {
	}

}
