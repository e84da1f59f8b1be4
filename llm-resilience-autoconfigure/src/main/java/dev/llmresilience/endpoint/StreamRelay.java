package dev.llmresilience.endpoint;

import java.util.List;

import dev.llmresilience.chat.Usage;
import dev.llmresilience.protocol.CompletionDelta;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.SynchronousSink;

/**
 * What a streamed attempt hands its subscriber: nothing before the first chunk that carries part of
 * the answer (text that is not only whitespace, or a tool-call piece), so that a failure before it
 * can be retried unseen, the whitespace before it prepended to it; the chunk with the finish reason
 * held back and merged with the usage chunk that follows it, so that the last chunk carries both.
 */
final class StreamRelay {

	private final StringBuilder leading = new StringBuilder();

	private boolean emitting;

	private @Nullable CompletionDelta held;

	void relay(CompletionDelta delta, SynchronousSink<CompletionDelta> sink) {
		CompletionDelta next = delta;
		if (!this.emitting) {
			if (!delta.hasAnswer()) {
				this.leading.append(delta.content());
				return;
			}
			this.emitting = true;
			next = delta.withContent(this.leading + delta.content());
		}
		if (next.finishReason() != null) {
			this.held = next;
		}
		else if (!next.content().isEmpty() || !next.toolCalls().isEmpty()) {
			sink.next(next.withUsage(null));
		}
	}

	/**
	 * The last chunk, once the stream has ended normally.
	 * @param usage the stream's token counts, or {@code null}
	 * @param model the model the provider named, or {@code null}
	 * @return the held finish chunk with the counts, a chunk with the counts alone, or {@code null}
	 */
	@Nullable CompletionDelta last(@Nullable Usage usage, @Nullable String model) {
		if (this.held == null && usage == null) {
			return null;
		}
		return (this.held != null) ? this.held.withUsage(usage) : new CompletionDelta("", List.of(), null, usage, model);
	}

}
