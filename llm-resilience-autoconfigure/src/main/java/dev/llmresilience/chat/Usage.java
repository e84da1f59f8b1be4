package dev.llmresilience.chat;

import java.io.Serializable;

import org.jspecify.annotations.Nullable;

/**
 * Token counts the provider reported.
 *
 * @param promptTokens tokens of the prompt, or {@code null} if not reported
 * @param completionTokens tokens of the completion, or {@code null} if not reported
 */
public record Usage(@Nullable Integer promptTokens, @Nullable Integer completionTokens) implements Serializable {

	/**
	 * Prompt and completion tokens together.
	 * @return the sum of the reported counts
	 */
	public int totalTokens() {
		return ((this.promptTokens != null) ? this.promptTokens : 0)
				+ ((this.completionTokens != null) ? this.completionTokens : 0);
	}

}
