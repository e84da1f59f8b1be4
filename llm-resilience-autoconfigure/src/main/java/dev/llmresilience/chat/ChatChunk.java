package dev.llmresilience.chat;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One piece of a streamed answer. Concatenating the {@code content} of every chunk gives the
 * answer's text; the last chunk carries the finish reason and the token counts.
 *
 * @param content the text added by this chunk (may be empty)
 * @param endpoint the endpoint streaming the answer, or {@code null} for {@link Tier#BUSY}
 * @param tier {@link Tier#PRIMARY} when the route's first endpoint streams it, {@link Tier#FALLBACK}
 * when another one does (also for a continuation after {@code llm.gateway.stream.resume-on-fallback}),
 * {@link Tier#BUSY} for the single chunk of a busy answer
 * @param finishReason on the last chunk, why the model stopped; else {@code null}
 * @param usage on the last chunk, the token counts if reported; else {@code null}
 * @param toolCalls the pieces of function calls this chunk adds; empty when none
 */
public record ChatChunk(String content, @Nullable String endpoint, Tier tier, @Nullable String finishReason,
		@Nullable Usage usage, List<ToolCallDelta> toolCalls) {

	public ChatChunk {
		toolCalls = List.copyOf(toolCalls);
	}

	/**
	 * Whether the chunk comes from anything but the route's first choice.
	 * @return true for every tier but {@link Tier#PRIMARY}
	 */
	public boolean isDegraded() {
		return this.tier != Tier.PRIMARY;
	}

}
