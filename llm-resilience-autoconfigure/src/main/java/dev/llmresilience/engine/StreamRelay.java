package dev.llmresilience.engine;

import java.util.List;

import dev.llmresilience.chat.Usage;
import dev.llmresilience.protocol.CompletionDelta;
import org.jspecify.annotations.Nullable;

/**
 * What a streamed attempt hands on of each chunk: nothing before the first token; the first one
 * carries the whitespace that came before it; the chunk with the finish reason waits for the usage
 * that may follow it, and is handed on last.
 */
final class StreamRelay {

	private boolean emitting;

	private @Nullable StringBuilder leading;

	private @Nullable CompletionDelta held;

	/**
	 * The chunk to hand on now.
	 * @param delta a chunk as it came
	 * @return the chunk to hand on, or {@code null} for none (then the next one is asked for)
	 */
	@Nullable CompletionDelta next(CompletionDelta delta) {
		CompletionDelta next = delta;
		if (!this.emitting) {
			if (!delta.hasAnswer()) {
				StringBuilder leading = (this.leading != null) ? this.leading : (this.leading = new StringBuilder());
				leading.append(delta.content());
				return null;
			}
			this.emitting = true;
			if (this.leading != null && !this.leading.isEmpty()) {
				next = delta.withContent(this.leading + delta.content());
			}
		}
		if (next.finishReason() != null) {
			this.held = next;
			return null;
		}
		if (next.content().isEmpty() && next.toolCalls().isEmpty()) {
			return null;
		}
		return (next.usage() != null) ? next.withUsage(null) : next;
	}

	/**
	 * The chunk that ends the stream, once it ended normally: the held finish chunk with the usage,
	 * or the usage alone.
	 * @param usage the answer's token counts, or {@code null}
	 * @param model the model the provider named, or {@code null}
	 * @return the last chunk, or {@code null} for none
	 */
	@Nullable CompletionDelta last(@Nullable Usage usage, @Nullable String model) {
		CompletionDelta held = this.held;
		if (held == null && usage == null) {
			return null;
		}
		return (held != null) ? held.withUsage(usage) : new CompletionDelta("", List.of(), null, usage, model);
	}

}
