package dev.llmresilience.springai;

import dev.llmresilience.chat.ChatRequest;

import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.model.tool.ToolCallingManager;

/**
 * A Spring AI {@link Prompt} as a gateway request: its messages, its options' {@code model} as the
 * route, temperature and max tokens as fields, top-p, stop sequences and the penalties as the
 * OpenAI fields in {@code extra}, the tools its tool-calling options resolve to, and the
 * {@link LlmGatewayChatOptions#getPriority() priority} of the gateway's own options.
 */
final class PromptRequests {

	private PromptRequests() {
	}

	static ChatRequest of(Prompt prompt, ToolCallingManager toolCallingManager) {
		ChatRequest.Builder request = ChatRequest.builder().messages(SpringAiMessages.fromSpringAi(prompt.getInstructions()));
		ChatOptions options = prompt.getOptions();
		if (options == null) {
			return request.build();
		}
		request.route((options.getModel() != null && !options.getModel().isBlank()) ? options.getModel() : null)
			.temperature(options.getTemperature())
			.maxTokens(options.getMaxTokens());
		if (options.getTopP() != null) {
			request.extra("top_p", options.getTopP());
		}
		if (options.getStopSequences() != null && !options.getStopSequences().isEmpty()) {
			request.extra("stop", options.getStopSequences());
		}
		if (options.getFrequencyPenalty() != null) {
			request.extra("frequency_penalty", options.getFrequencyPenalty());
		}
		if (options.getPresencePenalty() != null) {
			request.extra("presence_penalty", options.getPresencePenalty());
		}
		if (options instanceof LlmGatewayChatOptions gateway) {
			request.priority(gateway.getPriority());
		}
		if (options instanceof ToolCallingChatOptions tools) {
			request.tools(SpringAiMessages.tools(toolCallingManager.resolveToolDefinitions(tools)));
		}
		return request.build();
	}

}
