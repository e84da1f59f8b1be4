package dev.llmresilience.engine;

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
 * as a stream is answered from it whole; a streamed one tells its listeners the whole answer. An
 * answer that came in one piece (a client that does not stream, or a provider that answered a
 * streamed request with a plain completion) is kept as it came: most answers on the success path
 * are that, and re-assembling them would only copy them.
 */
final class Answer {

	private @Nullable Completion whole;

	// the text of the only chunk with text so far; the builder only once a second one comes
	private String first = "";

	private @Nullable StringBuilder text;

	private @Nullable Map<Integer, Call> toolCalls;

	private volatile @Nullable String finishReason;

	private volatile @Nullable Usage usage;

	private volatile @Nullable String model;

	void add(Completion completion) {
		this.whole = completion;
		this.first = completion.content();
		this.finishReason = completion.finishReason();
		this.usage = completion.usage();
		this.model = completion.model();
	}

	void add(CompletionDelta delta) {
		if (this.whole != null) {
			// a stream after a whole answer: assemble both from here on
			CompletionDelta earlier = CompletionDelta.of(this.whole);
			this.whole = null;
			this.first = "";
			add(earlier);
		}
		String content = delta.content();
		if (!content.isEmpty()) {
			if (this.text != null) {
				this.text.append(content);
			}
			else if (this.first.isEmpty()) {
				this.first = content;
			}
			else {
				this.text = new StringBuilder(this.first.length() + content.length() + 64).append(this.first).append(content);
			}
		}
		if (!delta.toolCalls().isEmpty()) {
			Map<Integer, Call> calls = (this.toolCalls != null) ? this.toolCalls : (this.toolCalls = new TreeMap<>());
			for (ToolCallDelta piece : delta.toolCalls()) {
				calls.computeIfAbsent(piece.index(), (index) -> new Call()).add(piece);
			}
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
		return (this.text != null) ? this.text.toString() : this.first;
	}

	boolean hasToolCalls() {
		Completion whole = this.whole;
		return (whole != null) ? !whole.toolCalls().isEmpty() : this.toolCalls != null && !this.toolCalls.isEmpty();
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

	/**
	 * The answer as the listeners hear of it: a piece with no function name (a provider's stray
	 * delta) is no call that can be made, and is left out.
	 * @return the completion
	 */
	Completion completion() {
		if (this.whole != null) {
			return this.whole;
		}
		List<ToolCall> calls = List.of();
		if (this.toolCalls != null) {
			calls = new ArrayList<>(this.toolCalls.size());
			for (Call call : this.toolCalls.values()) {
				if (call.name != null) {
					calls.add(call.toToolCall());
				}
			}
		}
		return new Completion(text(), this.model, this.finishReason, calls, this.usage);
	}

	/**
	 * The answer as a chat call returns it: every tool call, one whose pieces never named its
	 * function included (with an empty name).
	 * @return the completion
	 */
	Completion chatCompletion() {
		if (this.whole != null || this.toolCalls == null) {
			return completion();
		}
		List<ToolCall> calls = new ArrayList<>(this.toolCalls.size());
		this.toolCalls.values().forEach((call) -> calls.add(call.toToolCall()));
		return new Completion(text(), this.model, this.finishReason, calls, this.usage);
	}

	/**
	 * Whether a whole completion carries part of an answer: text that is not only whitespace, or a
	 * tool call (as {@link CompletionDelta#hasAnswer()} says of a chunk).
	 * @param completion the completion
	 * @return true when it does
	 */
	static boolean hasAnswer(Completion completion) {
		return !completion.content().isBlank() || !completion.toolCalls().isEmpty();
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
