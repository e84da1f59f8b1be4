package dev.llmresilience.endpoint;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import org.jspecify.annotations.Nullable;

/**
 * What one attempt has received so far, assembled: the text, the tool calls (their pieces joined
 * by index), the finish reason, the token counts and the model. A chat attempt that went upstream
 * as a stream is answered from it whole; a streamed one tells its listeners the whole answer.
 */
final class Answer {

	private final StringBuilder text = new StringBuilder();

	private final Map<Integer, Call> toolCalls = new TreeMap<>();

	private volatile @Nullable String finishReason;

	private volatile @Nullable Usage usage;

	private volatile @Nullable String model;

	void add(CompletionDelta delta) {
		this.text.append(delta.content());
		for (ToolCallDelta piece : delta.toolCalls()) {
			this.toolCalls.computeIfAbsent(piece.index(), (index) -> new Call()).add(piece);
		}
		if (delta.finishReason() != null) {
			this.finishReason = delta.finishReason();
		}
		if (delta.usage() != null) {
			this.usage = delta.usage();
		}
		if (delta.model() != null) {
			this.model = delta.model();
		}
	}

	String text() {
		return this.text.toString();
	}

	boolean hasToolCalls() {
		return !this.toolCalls.isEmpty();
	}

	@Nullable String finishReason() {
		return this.finishReason;
	}

	@Nullable Usage usage() {
		return this.usage;
	}

	@Nullable String model() {
		return this.model;
	}

	Completion completion() {
		List<ToolCall> calls = new ArrayList<>();
		// a piece with no function name (a provider's stray delta) is no call that can be made
		this.toolCalls.values().stream().filter((call) -> call.name != null).forEach((call) -> calls.add(call.toToolCall()));
		return new Completion(text(), this.model, this.finishReason, calls, this.usage);
	}

	/**
	 * The whole answer as one chunk, as a chat attempt hands it on.
	 * @return the chunk
	 */
	CompletionDelta asDelta() {
		List<ToolCallDelta> calls = new ArrayList<>();
		this.toolCalls.forEach((index, call) -> calls.add(new ToolCallDelta(index, call.id, call.name,
				call.arguments.toString())));
		return new CompletionDelta(text(), calls, this.finishReason, this.usage, this.model);
	}

	/**
	 * The completion a chat attempt's one chunk stands for.
	 * @param whole the chunk from {@link #asDelta()}
	 * @return the completion
	 */
	static Completion completionOf(CompletionDelta whole) {
		List<ToolCall> calls = whole.toolCalls()
			.stream()
			.map((call) -> new ToolCall((call.id() != null) ? call.id() : "", (call.name() != null) ? call.name() : "",
					call.arguments()))
			.toList();
		return new Completion(whole.content(), whole.model(), whole.finishReason(), calls, whole.usage());
	}

	private static final class Call {

		private @Nullable String id;

		private @Nullable String name;

		private final StringBuilder arguments = new StringBuilder();

		void add(ToolCallDelta piece) {
			if (piece.id() != null) {
				this.id = piece.id();
			}
			if (piece.name() != null) {
				this.name = piece.name();
			}
			this.arguments.append(piece.arguments());
		}

		ToolCall toToolCall() {
			return new ToolCall((this.id != null) ? this.id : "", (this.name != null) ? this.name : "",
					this.arguments.toString());
		}

	}

}
