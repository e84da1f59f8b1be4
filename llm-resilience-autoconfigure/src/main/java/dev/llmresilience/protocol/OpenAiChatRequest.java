package dev.llmresilience.protocol;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

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
 * @param extra fields passed through
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record OpenAiChatRequest(@JsonProperty("model") @Nullable String model, @JsonProperty("messages") List<Message> messages,
		@JsonProperty("temperature") @Nullable Double temperature,
		@JsonProperty("max_tokens") @Nullable Integer maxTokens, @JsonProperty("stream") @Nullable Boolean stream,
		@JsonProperty("stream_options") @Nullable StreamOptions streamOptions, @JsonAnyGetter Map<String, Object> extra) {

	@JsonInclude(JsonInclude.Include.NON_NULL)
	record Message(@JsonProperty("role") String role, @JsonProperty("content") String content) {
	}

	/**
	 * Options of a streamed request.
	 *
	 * @param includeUsage ask for a last chunk with the token counts
	 */
	record StreamOptions(@JsonProperty("include_usage") boolean includeUsage) {
	}

}
