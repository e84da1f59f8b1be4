package dev.llmresilience.protocol.anthropic;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /v1/messages}. Fields left {@code null} are not sent; {@code extra} is
 * merged into the body as it is.
 *
 * @param model the model
 * @param maxTokens largest completion; the Messages API requires it
 * @param messages the conversation without its system messages
 * @param system the system prompt, or {@code null}
 * @param temperature sampling temperature, 0 to 1
 * @param stream whether to stream
 * @param extra fields passed through (already translated from OpenAI's names)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record AnthropicRequest(@JsonProperty("model") String model, @JsonProperty("max_tokens") int maxTokens,
		@JsonProperty("messages") List<Message> messages, @JsonProperty("system") @Nullable String system,
		@JsonProperty("temperature") @Nullable Double temperature, @JsonProperty("stream") @Nullable Boolean stream,
		@JsonAnyGetter Map<String, Object> extra) {

	/**
	 * One turn of the conversation.
	 *
	 * @param role {@code user} or {@code assistant}
	 * @param content the text, or a list of content blocks ({@code text}, {@code tool_use},
	 * {@code tool_result}, {@code image})
	 */
	record Message(@JsonProperty("role") String role, @JsonProperty("content") Object content) {
	}

}
