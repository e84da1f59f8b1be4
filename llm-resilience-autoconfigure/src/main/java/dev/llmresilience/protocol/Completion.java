package dev.llmresilience.protocol;

import java.util.List;

import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.Usage;
import org.jspecify.annotations.Nullable;

/**
 * A usable answer from one endpoint, in the project's own terms.
 *
 * @param content the text (empty when the model only called tools)
 * @param model the model the provider says answered, or {@code null}
 * @param finishReason why the model stopped, or {@code null}
 * @param toolCalls functions the model asked to call
 * @param usage token counts, or {@code null}
 */
public record Completion(String content, @Nullable String model, @Nullable String finishReason,
		List<ToolCall> toolCalls, @Nullable Usage usage) {
}
