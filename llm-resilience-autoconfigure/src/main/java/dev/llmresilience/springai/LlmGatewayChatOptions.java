package dev.llmresilience.springai;

import java.util.Objects;

import dev.llmresilience.chat.Priority;
import org.jspecify.annotations.Nullable;

import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.model.tool.DefaultToolCallingChatOptions;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

/**
 * Spring AI tool-calling options with the gateway's own: the call's {@link Priority}. Pass them to
 * a {@code ChatClient} request, {@code .options(LlmGatewayChatOptions.builder().priority(Priority.BATCH))},
 * or as a prompt's options; the gateway's {@code ChatModel} starts from these options with nothing
 * set, so a request's priority is kept when Spring AI combines them.
 */
public class LlmGatewayChatOptions extends DefaultToolCallingChatOptions {

	private final @Nullable Priority priority;

	protected LlmGatewayChatOptions(ToolCallingChatOptions options, @Nullable Priority priority) {
		super(options.getToolCallbacks(), options.getToolContext(), options.getModel(), options.getFrequencyPenalty(),
				options.getMaxTokens(), options.getPresencePenalty(), options.getStopSequences(),
				options.getTemperature(), options.getTopK(), options.getTopP());
		this.priority = priority;
	}

	/**
	 * Options with nothing set.
	 * @return the builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Whose call it is.
	 * @return the priority, or {@code null} for the default ({@link Priority#INTERACTIVE})
	 */
	public @Nullable Priority getPriority() {
		return this.priority;
	}

	@Override
	public Builder mutate() {
		Builder builder = builder().model(getModel())
			.frequencyPenalty(getFrequencyPenalty())
			.maxTokens(getMaxTokens())
			.presencePenalty(getPresencePenalty())
			.stopSequences(getStopSequences())
			.temperature(getTemperature())
			.topK(getTopK())
			.topP(getTopP())
			.toolCallbacks(getToolCallbacks())
			.toolContext(getToolContext());
		return builder.priority(this.priority);
	}

	@Override
	public boolean equals(Object other) {
		return super.equals(other) && other instanceof LlmGatewayChatOptions options
				&& Objects.equals(this.priority, options.priority);
	}

	@Override
	public int hashCode() {
		return 31 * super.hashCode() + Objects.hashCode(this.priority);
	}

	/** Builds {@link LlmGatewayChatOptions}. */
	public static class Builder extends DefaultToolCallingChatOptions.Builder<Builder> {

		private @Nullable Priority priority;

		/**
		 * Say whose call it is: a {@link Priority#BATCH} call uses at most
		 * {@code llm.gateway.batch-share} of an endpoint and yields the rest to interactive calls.
		 * @param priority the priority, or {@code null} for the default ({@link Priority#INTERACTIVE})
		 * @return this builder
		 */
		public Builder priority(@Nullable Priority priority) {
			this.priority = priority;
			return this;
		}

		@Override
		public Builder combineWith(ChatOptions.Builder<?> other) {
			super.combineWith(other);
			if (other instanceof Builder options && options.priority != null) {
				this.priority = options.priority;
			}
			return this;
		}

		@Override
		public LlmGatewayChatOptions build() {
			return new LlmGatewayChatOptions(super.build(), this.priority);
		}

	}

}
