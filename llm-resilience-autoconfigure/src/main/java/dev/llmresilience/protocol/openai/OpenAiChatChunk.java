package dev.llmresilience.protocol.openai;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * The {@code data} of one server-sent event of a streamed completion ({@code chat.completion.chunk}),
 * or an error sent as a data event: only the fields this project reads. Unknown ones
 * ({@code obfuscation}, {@code service_tier}, {@code logprobs}, ...) are ignored, and {@code usage}
 * is {@code null} on every chunk but the last.
 *
 * @param model the model that answers
 * @param choices the choices; empty on the final usage chunk
 * @param usage token counts, on the final chunk when {@code stream_options.include_usage} was asked
 * @param error the error object of a failure reported mid-stream
 */
@JsonIgnoreProperties(ignoreUnknown = true)
record OpenAiChatChunk(@JsonProperty("model") @Nullable String model,
		@JsonProperty("choices") @Nullable List<Choice> choices,
		@JsonProperty("usage") OpenAiChatCompletion.@Nullable Usage usage,
		@JsonProperty("error") OpenAiChatCompletion.@Nullable Error error) {

	@JsonIgnoreProperties(ignoreUnknown = true)
	record Choice(@JsonProperty("index") @Nullable Integer index, @JsonProperty("delta") @Nullable Delta delta,
			@JsonProperty("finish_reason") @Nullable String finishReason) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record Delta(@JsonProperty("content") @Nullable String content,
			@JsonProperty("tool_calls") @Nullable List<ToolCall> toolCalls) {
	}

	@JsonIgnoreProperties(ignoreUnknown = true)
	record ToolCall(@JsonProperty("index") @Nullable Integer index, @JsonProperty("id") @Nullable String id,
			@JsonProperty("function") OpenAiChatCompletion.@Nullable Function function) {
	}

}
