package dev.llmresilience.protocol.openai;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * The body of a {@code chat.completion} response, or of an error response: only the fields this
 * project reads; unknown ones ({@code service_tier}, {@code system_fingerprint}, ...) are ignored.
 *
 * @param model the model that answered
 * @param choices the choices
 * @param usage token counts
 * @param error the error object of an error body
 */
@JsonIgnoreProperties(ignoreUnknown = true)
record OpenAiChatCompletion(@JsonProperty("model") @Nullable String model,
		@JsonProperty("choices") @Nullable List<Choice> choices, @JsonProperty("usage") @Nullable Usage usage,
		@JsonProperty("error") @Nullable Error error) {

	@JsonIgnoreProperties(ignoreUnknown = true)
	record Choice(@JsonProperty("index") @Nullable Integer index, @JsonProperty("message") @Nullable Message message,
			@JsonProperty("finish_reason") @Nullable String finishReason) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record Message(@JsonProperty("role") @Nullable String role, @JsonProperty("content") @Nullable String content,
			@JsonProperty("refusal") @Nullable String refusal,
			@JsonProperty("tool_calls") @Nullable List<ToolCall> toolCalls) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record ToolCall(@JsonProperty("id") @Nullable String id, @JsonProperty("type") @Nullable String type,
			@JsonProperty("function") @Nullable Function function) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record Function(@JsonProperty("name") @Nullable String name, @JsonProperty("arguments") @Nullable String arguments) {
	}

	// Long, so that an absurd count is checked (ReportedUsage) rather than failing the whole body.
	@JsonIgnoreProperties(ignoreUnknown = true)
	record Usage(@JsonProperty("prompt_tokens") @Nullable Long promptTokens,
			@JsonProperty("completion_tokens") @Nullable Long completionTokens) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record Error(@JsonProperty("message") @Nullable String message, @JsonProperty("type") @Nullable String type,
			@JsonProperty("code") @Nullable Object code) {
	}

}
