package dev.llmresilience.openaiapi;

import java.util.List;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import dev.llmresilience.protocol.Completion;
import org.jspecify.annotations.Nullable;

/**
 * The bodies the OpenAI-compatible API writes, shaped as the official SDKs read them: the fields
 * they require are always present, those that may be null are written as {@code null}.
 */
final class OpenAiApiBodies {

	private OpenAiApiBodies() {
	}

	@JsonInclude(JsonInclude.Include.NON_NULL)
	record Completion(@JsonProperty("id") String id, @JsonProperty("object") String object,
			@JsonProperty("created") long created, @JsonProperty("model") String model,
			@JsonProperty("choices") List<Choice> choices, @JsonProperty("usage") @Nullable Usage usage) {
	}

	record Choice(@JsonProperty("index") int index, @JsonProperty("message") Message message,
			@JsonProperty("logprobs") @Nullable Object logprobs, @JsonProperty("finish_reason") String finishReason) {
	}

	@JsonInclude(JsonInclude.Include.NON_EMPTY)
	record Message(@JsonProperty("role") String role,
			@JsonProperty("content") @JsonInclude(JsonInclude.Include.ALWAYS) @Nullable String content,
			@JsonProperty("refusal") @JsonInclude(JsonInclude.Include.ALWAYS) @Nullable String refusal,
			@JsonProperty("tool_calls") List<ToolCall> toolCalls) {
	}

	record ToolCall(@JsonProperty("id") String id, @JsonProperty("type") String type,
			@JsonProperty("function") Function function) {
	}

	record Function(@JsonProperty("name") String name, @JsonProperty("arguments") String arguments) {
	}

	@JsonInclude(JsonInclude.Include.NON_NULL)
	record Chunk(@JsonProperty("id") String id, @JsonProperty("object") String object,
			@JsonProperty("created") long created, @JsonProperty("model") String model,
			@JsonProperty("choices") List<ChunkChoice> choices, @JsonProperty("usage") @Nullable Usage usage) {
	}

	record ChunkChoice(@JsonProperty("index") int index, @JsonProperty("delta") Delta delta,
			@JsonProperty("logprobs") @Nullable Object logprobs,
			@JsonProperty("finish_reason") @Nullable String finishReason) {
	}

	@JsonInclude(JsonInclude.Include.NON_NULL)
	record Delta(@JsonProperty("role") @Nullable String role, @JsonProperty("content") @Nullable String content,
			@JsonProperty("tool_calls") @Nullable List<DeltaToolCall> toolCalls) {
	}

	@JsonInclude(JsonInclude.Include.NON_NULL)
	record DeltaToolCall(@JsonProperty("index") int index, @JsonProperty("id") @Nullable String id,
			@JsonProperty("type") @Nullable String type, @JsonProperty("function") DeltaFunction function) {
	}

	@JsonInclude(JsonInclude.Include.NON_NULL)
	record DeltaFunction(@JsonProperty("name") @Nullable String name, @JsonProperty("arguments") String arguments) {
	}

	record Usage(@JsonProperty("prompt_tokens") int promptTokens,
			@JsonProperty("completion_tokens") int completionTokens, @JsonProperty("total_tokens") int totalTokens) {
	}

	record ModelList(@JsonProperty("object") String object, @JsonProperty("data") List<Model> data) {
	}

	record Model(@JsonProperty("id") String id, @JsonProperty("object") String object,
			@JsonProperty("created") long created, @JsonProperty("owned_by") String ownedBy) {
	}

	record ErrorBody(@JsonProperty("error") Error error) {
	}

	record Error(@JsonProperty("message") String message, @JsonProperty("type") String type,
			@JsonProperty("param") @Nullable String param, @JsonProperty("code") @Nullable String code) {
	}

}
