package dev.llmresilience.protocol.anthropic;

import dev.llmresilience.chat.ChatResponse;
import java.util.List;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The body of a Messages API answer ({@code "type": "message"}) or of an error
 * ({@code "type": "error"}), and the message of a stream's {@code message_start}: only the fields
 * this project reads. Unknown fields ({@code stop_details}, {@code service_tier}, {@code container},
 * ...) and block types ({@code thinking}, {@code server_tool_use}, ...) are ignored.
 *
 * @param type {@code message} or {@code error}
 * @param model the model that answered
 * @param content the content blocks
 * @param stopReason why the model stopped, in Anthropic's words
 * @param usage token counts
 * @param error the error of an error body
 */
@JsonIgnoreProperties(ignoreUnknown = true)
record AnthropicMessage(@JsonProperty("type") @Nullable String type, @JsonProperty("model") @Nullable String model,
		@JsonProperty("content") @Nullable List<ContentBlock> content,
		@JsonProperty("stop_reason") @Nullable String stopReason, @JsonProperty("usage") @Nullable Usage usage,
		@JsonProperty("error") @Nullable Error error) {

	/**
	 * The finish reason in the words the rest of the project (and OpenAI) uses, so that a route that
	 * mixes protocols reports one vocabulary: {@code refusal} (a streaming classifier stopped the
	 * model) is {@code content_filter}, which the failure rules treat like any provider's filter.
	 * Reasons without an equivalent ({@code pause_turn}) are kept as Anthropic says them.
	 * @param stopReason Anthropic's stop reason, or {@code null}
	 * @return the finish reason, or {@code null}
	 */
	static @Nullable String finishReason(@Nullable String stopReason) {
		if (stopReason == null) {
			return null;
		}
		return switch (stopReason) {
			case "end_turn", "stop_sequence" -> "stop";
			case "max_tokens", "model_context_window_exceeded" -> "length";
			case "tool_use" -> "tool_calls";
			case "refusal" -> ChatResponse.CONTENT_FILTER;
			default -> stopReason;
		};
	}

	/**
	 * One content block: text, or a tool call.
	 *
	 * @param type {@code text}, {@code tool_use}, or another type this project ignores
	 * @param text the text of a text block
	 * @param id the id of a tool call
	 * @param name the tool's name
	 * @param input the tool call's arguments
	 */
	@JsonIgnoreProperties(ignoreUnknown = true)
	record ContentBlock(@JsonProperty("type") @Nullable String type, @JsonProperty("text") @Nullable String text,
			@JsonProperty("id") @Nullable String id, @JsonProperty("name") @Nullable String name,
			@JsonProperty("input") @Nullable JsonNode input) {

		boolean isText() {
			return "text".equals(this.type);
		}

		boolean isToolUse() {
			return "tool_use".equals(this.type);
		}

	}

	/**
	 * Token counts. {@code input_tokens} leaves out the tokens read from or written to the prompt
	 * cache, which the prompt also consumed.
	 *
	 * @param inputTokens uncached prompt tokens
	 * @param outputTokens completion tokens (in a stream's {@code message_delta}: all of them so far)
	 * @param cacheCreationInputTokens prompt tokens written to the cache
	 * @param cacheReadInputTokens prompt tokens read from the cache
	 */
	// Long, so that an absurd count is checked (ReportedUsage) rather than failing the whole body.
	@JsonIgnoreProperties(ignoreUnknown = true)
	record Usage(@JsonProperty("input_tokens") @Nullable Long inputTokens,
			@JsonProperty("output_tokens") @Nullable Long outputTokens,
			@JsonProperty("cache_creation_input_tokens") @Nullable Long cacheCreationInputTokens,
			@JsonProperty("cache_read_input_tokens") @Nullable Long cacheReadInputTokens) {

		/**
		 * The prompt's tokens in all, cached or not, as OpenAI's {@code prompt_tokens} counts them.
		 * @return the count, or {@code null} when none was reported
		 */
		@Nullable Long promptTokens() {
			if (this.inputTokens == null && this.cacheCreationInputTokens == null && this.cacheReadInputTokens == null) {
				return null;
			}
			return count(this.inputTokens) + count(this.cacheCreationInputTokens) + count(this.cacheReadInputTokens);
		}

		private static long count(@Nullable Long tokens) {
			return (tokens != null) ? tokens : 0;
		}

	}

	/**
	 * The error of an error body or of a stream's {@code error} event.
	 *
	 * @param type e.g. {@code overloaded_error}, {@code rate_limit_error}
	 * @param message what happened
	 */
	@JsonIgnoreProperties(ignoreUnknown = true)
	record Error(@JsonProperty("type") @Nullable String type, @JsonProperty("message") @Nullable String message) {
	}

}
