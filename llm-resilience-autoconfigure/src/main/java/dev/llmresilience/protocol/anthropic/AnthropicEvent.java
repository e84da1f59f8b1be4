package dev.llmresilience.protocol.anthropic;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;

/**
 * The {@code data} of one server-sent event of a streamed Messages API answer: {@code message_start},
 * {@code content_block_start}, {@code content_block_delta}, {@code content_block_stop},
 * {@code message_delta}, {@code message_stop}, {@code ping} or {@code error}. Only the fields this
 * project reads; event types it does not know are ignored, as Anthropic's versioning policy asks.
 *
 * @param type the event's type
 * @param message the message of {@code message_start}
 * @param index the content block an event is about
 * @param contentBlock the block {@code content_block_start} opens
 * @param delta what {@code content_block_delta} or {@code message_delta} adds
 * @param usage the counts of {@code message_delta}
 * @param error the error of an {@code error} event
 */
@JsonIgnoreProperties(ignoreUnknown = true)
record AnthropicEvent(@JsonProperty("type") @Nullable String type,
		@JsonProperty("message") @Nullable AnthropicMessage message, @JsonProperty("index") @Nullable Integer index,
		@JsonProperty("content_block") AnthropicMessage.@Nullable ContentBlock contentBlock,
		@JsonProperty("delta") @Nullable Delta delta, @JsonProperty("usage") AnthropicMessage.@Nullable Usage usage,
		@JsonProperty("error") AnthropicMessage.@Nullable Error error) {

	/**
	 * What a delta adds: text ({@code text_delta}), a fragment of a tool call's arguments
	 * ({@code input_json_delta}), or, in {@code message_delta}, the stop reason.
	 *
	 * @param type the delta's type
	 * @param text the text of a {@code text_delta}
	 * @param partialJson the fragment of an {@code input_json_delta}
	 * @param stopReason the stop reason of a {@code message_delta}
	 */
	@JsonIgnoreProperties(ignoreUnknown = true)
	record Delta(@JsonProperty("type") @Nullable String type, @JsonProperty("text") @Nullable String text,
			@JsonProperty("partial_json") @Nullable String partialJson,
			@JsonProperty("stop_reason") @Nullable String stopReason) {
	}

}
