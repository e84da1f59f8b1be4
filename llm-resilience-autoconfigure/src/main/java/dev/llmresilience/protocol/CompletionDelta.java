package dev.llmresilience.protocol;

import java.util.ArrayList;
import java.util.List;

import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
import org.jspecify.annotations.Nullable;

/**
 * One chunk of a streamed answer from one endpoint, in the project's own terms.
 *
 * @param content the text this chunk adds (may be empty)
 * @param toolCalls the pieces of function calls this chunk adds
 * @param finishReason why the model stopped, on the chunk that says so; else {@code null}
 * @param usage token counts, on the chunk that reports them; else {@code null}
 * @param model the model the provider says is answering, or {@code null}
 */
public record CompletionDelta(String content, List<ToolCallDelta> toolCalls, @Nullable String finishReason,
		@Nullable Usage usage, @Nullable String model) {

	public CompletionDelta {
		toolCalls = List.copyOf(toolCalls);
	}

	/**
	 * The one chunk that stands for a whole answer: what a stream is when the provider answered a
	 * request to stream with a plain JSON completion.
	 * @param completion the answer
	 * @return the chunk, with the answer's tool calls numbered in order
	 */
	public static CompletionDelta of(Completion completion) {
		List<ToolCallDelta> calls = new ArrayList<>();
		for (int i = 0; i < completion.toolCalls().size(); i++) {
			ToolCall call = completion.toolCalls().get(i);
			calls.add(new ToolCallDelta(i, call.id(), call.name(), call.arguments()));
		}
		return new CompletionDelta(completion.content(), calls, completion.finishReason(), completion.usage(),
				completion.model());
	}

	/**
	 * Whether this chunk adds to the answer itself: text that is not only whitespace, or a piece of
	 * a function call. The first such chunk is a stream's "first token".
	 * @return true when it carries part of the answer
	 */
	public boolean hasAnswer() {
		return !this.content.isBlank() || !this.toolCalls.isEmpty();
	}

	/**
	 * A copy with other text.
	 * @param content the text
	 * @return the copy
	 */
	public CompletionDelta withContent(String content) {
		return new CompletionDelta(content, this.toolCalls, this.finishReason, this.usage, this.model);
	}

	/**
	 * A copy with token counts.
	 * @param usage the counts
	 * @return the copy
	 */
	public CompletionDelta withUsage(@Nullable Usage usage) {
		return new CompletionDelta(this.content, this.toolCalls, this.finishReason, usage, this.model);
	}

}
