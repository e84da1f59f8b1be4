package dev.llmresilience.openaiapi;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import org.jspecify.annotations.Nullable;

/**
 * The bodies the Responses API writes, shaped as the official SDKs read a {@code response} object
 * and its output items: the fields they require are always present, those that may be null are
 * written as {@code null}; {@code usage} only when the provider reported it.
 */
final class ResponsesBodies {

	private ResponsesBodies() {
	}

	@JsonInclude(JsonInclude.Include.ALWAYS)
	record Response(@JsonProperty("id") String id, @JsonProperty("object") String object,
			@JsonProperty("created_at") long createdAt, @JsonProperty("status") String status,
			@JsonProperty("error") @Nullable Error error,
			@JsonProperty("incomplete_details") @Nullable IncompleteDetails incompleteDetails,
			@JsonProperty("model") String model, @JsonProperty("output") List<Object> output,
			@JsonUnwrapped Settings settings,
			@JsonProperty("usage") @JsonInclude(JsonInclude.Include.NON_NULL) @Nullable Usage usage) {
	}

	/** The request's settings, which a {@code response} object repeats among its own fields. */
	@JsonInclude(JsonInclude.Include.ALWAYS)
	record Settings(@JsonProperty("instructions") @Nullable String instructions,
			@JsonProperty("max_output_tokens") @Nullable Integer maxOutputTokens,
			@JsonProperty("parallel_tool_calls") boolean parallelToolCalls,
			@JsonProperty("temperature") @Nullable Double temperature, @JsonProperty("tool_choice") Object toolChoice,
			@JsonProperty("tools") List<FunctionTool> tools, @JsonProperty("top_p") @Nullable Double topP,
			@JsonProperty("metadata") Map<String, Object> metadata, @JsonProperty("store") boolean store,
			@JsonProperty("truncation") String truncation) {
	}

	record Message(@JsonProperty("type") String type, @JsonProperty("id") String id,
			@JsonProperty("status") String status, @JsonProperty("role") String role,
			@JsonProperty("content") List<OutputText> content) {
	}

	record OutputText(@JsonProperty("type") String type, @JsonProperty("text") String text,
			@JsonProperty("annotations") List<Object> annotations, @JsonProperty("logprobs") List<Object> logprobs) {
	}

	record FunctionCall(@JsonProperty("type") String type, @JsonProperty("id") String id,
			@JsonProperty("call_id") String callId, @JsonProperty("name") String name,
			@JsonProperty("arguments") String arguments, @JsonProperty("status") String status) {
	}

	@JsonInclude(JsonInclude.Include.ALWAYS)
	record FunctionTool(@JsonProperty("type") String type, @JsonProperty("name") String name,
			@JsonProperty("description") @Nullable String description,
			@JsonProperty("parameters") @Nullable Object parameters, @JsonProperty("strict") @Nullable Boolean strict) {
	}

	record FunctionChoice(@JsonProperty("type") String type, @JsonProperty("name") String name) {
	}

	record Usage(@JsonProperty("input_tokens") int inputTokens,
			@JsonProperty("input_tokens_details") InputDetails inputTokensDetails,
			@JsonProperty("output_tokens") int outputTokens,
			@JsonProperty("output_tokens_details") OutputDetails outputTokensDetails,
			@JsonProperty("total_tokens") int totalTokens) {
	}

	record InputDetails(@JsonProperty("cached_tokens") int cachedTokens) {
	}

	record OutputDetails(@JsonProperty("reasoning_tokens") int reasoningTokens) {
	}

	record Error(@JsonProperty("code") String code, @JsonProperty("message") String message) {
	}

	record IncompleteDetails(@JsonProperty("reason") String reason) {
	}

}
