package dev.llmresilience.gateway;

import org.jspecify.annotations.Nullable;

/**
 * One piece of a streamed answer.
 *
 * @param content the text added by this chunk (may be empty)
 * @param endpoint the endpoint streaming the answer
 * @param tier {@link Tier#PRIMARY} or {@link Tier#FALLBACK}
 * @param finishReason on the last chunk, why the model stopped; else {@code null}
 * @param usage on the last chunk, the token counts if reported; else {@code null}
 */
public record ChatChunk(String content, String endpoint, Tier tier, @Nullable String finishReason,
		@Nullable Usage usage) {
}
