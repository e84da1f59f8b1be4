package dev.llmresilience.springai;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.gateway.LlmGateway;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.metadata.ChatGenerationMetadata;
import org.springframework.ai.chat.metadata.ChatResponseMetadata;
import org.springframework.ai.chat.metadata.DefaultUsage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingManager;

/**
 * The gateway as a Spring AI {@link ChatModel}: {@code ChatClient.create(model)} gets each call
 * through the route's breakers, retries and fallbacks. The prompt's {@code model} option names the
 * route (none: the {@code RouteSelector}'s); its tools are resolved by the {@link ToolCallingManager}
 * and sent to the model, whose tool calls come back in the answer for the {@code ChatClient}'s
 * tool-calling advisor to run, as with Spring AI's own models. The answer's metadata carries the
 * model, the usage and the finish reason, and under {@link #TIER}, {@link #ENDPOINT},
 * {@link #ATTEMPTS}, {@link #LATENCY} and {@link #COST} how the gateway got it.
 */
final class LlmGatewayChatModel implements ChatModel {

	/** Metadata key: the answer's tier ({@code PRIMARY}, {@code FALLBACK}, {@code CACHED}, ...), a String. */
	public static final String TIER = "llm.tier";

	/** Metadata key: the endpoint that answered, a String; absent for a busy answer. */
	public static final String ENDPOINT = "llm.endpoint";

	/** Metadata key: every attempt made or refused, a {@code List<dev.llmresilience.chat.Attempt>}; not on stream chunks. */
	public static final String ATTEMPTS = "llm.attempts";

	/** Metadata key: the gateway call's latency, a {@code Duration}; not on stream chunks. */
	public static final String LATENCY = "llm.latency";

	/** Metadata key: the call's cost from the endpoint's price, a {@code BigDecimal}, when known. */
	public static final String COST = "llm.cost";

	private final LlmGateway gateway;

	private final EndpointRegistry endpoints;

	private final ToolCallingManager toolCallingManager;

	private final boolean busyAsError;

	/**
	 * Create the model.
	 * @param gateway the gateway
	 * @param endpoints the endpoints, to name the model that streams an answer
	 * @param toolCallingManager resolves a prompt's tool callbacks to the definitions sent to the model
	 * @param busyAsError raise a {@code TransientAiException} instead of answering with the busy message
	 */
	public LlmGatewayChatModel(LlmGateway gateway, EndpointRegistry endpoints, ToolCallingManager toolCallingManager,
			boolean busyAsError) {
		this.gateway = gateway;
		this.endpoints = endpoints;
		this.toolCallingManager = toolCallingManager;
		this.busyAsError = busyAsError;
	}

	/**
	 * The gateway's options with nothing set: the route is chosen by the {@code RouteSelector}, each
	 * endpoint's model and defaults apply, and the call is interactive.
	 * @return the options
	 */
	@Override
	public ChatOptions getOptions() {
		return LlmGatewayChatOptions.builder().build();
	}

	@Override
	public ChatResponse call(Prompt prompt) {
		ChatRequest request = PromptRequests.of(prompt, this.toolCallingManager);
		dev.llmresilience.chat.ChatResponse answer;
		try {
			answer = this.gateway.chat(request).block();
		}
		catch (RuntimeException ex) {
			throw SpringAiErrors.unchecked(SpringAiErrors.translate(ex));
		}
		if (answer == null) {
			throw new IllegalStateException("The gateway gave no answer");
		}
		if (answer.tier() == Tier.BUSY && this.busyAsError) {
			throw SpringAiErrors.busy(answer.content());
		}
		return response(answer);
	}

	@Override
	public Flux<ChatResponse> stream(Prompt prompt) {
		return Flux.defer(() -> {
			ChatRequest request = PromptRequests.of(prompt, this.toolCallingManager);
			ToolCallBuffer calls = new ToolCallBuffer();
			return this.gateway.stream(request)
				.concatMap((chunk) -> (chunk.tier() == Tier.BUSY && this.busyAsError)
						? Flux.error(SpringAiErrors.busy(chunk.content())) : Flux.just(chunk))
				.map((chunk) -> chunk(chunk, calls))
				.concatWith(Flux.defer(() -> calls.pending() ? Flux.just(calls.flush()) : Flux.empty()));
		}).onErrorMap(SpringAiErrors::translate);
	}

	private static ChatResponse response(dev.llmresilience.chat.ChatResponse answer) {
		AssistantMessage message = AssistantMessage.builder()
			.content(answer.content())
			.toolCalls(answer.toolCalls().stream().map(LlmGatewayChatModel::toolCall).toList())
			.build();
		ChatResponseMetadata.Builder metadata = ChatResponseMetadata.builder()
			.keyValue(TIER, answer.tier().name())
			.keyValue(ENDPOINT, answer.endpoint())
			.keyValue(ATTEMPTS, answer.attempts())
			.keyValue(LATENCY, answer.latency())
			.keyValue(COST, answer.cost());
		if (answer.model() != null) {
			metadata.model(answer.model());
		}
		if (answer.usage() != null) {
			metadata.usage(usage(answer.usage()));
		}
		return new ChatResponse(List.of(new Generation(message, generation(answer.finishReason()))), metadata.build());
	}

	private ChatResponse chunk(ChatChunk chunk, ToolCallBuffer calls) {
		calls.add(chunk.toolCalls());
		ChatResponseMetadata.Builder metadata = ChatResponseMetadata.builder()
			.keyValue(TIER, chunk.tier().name())
			.keyValue(ENDPOINT, chunk.endpoint());
		String model = modelOf(chunk.endpoint());
		if (model != null) {
			metadata.model(model);
		}
		if (chunk.usage() != null) {
			metadata.usage(usage(chunk.usage()));
		}
		// a tool call is handed over whole, on the chunk that ends the answer, as Spring AI's models do
		List<AssistantMessage.ToolCall> whole = (chunk.finishReason() != null) ? calls.drain() : List.of();
		AssistantMessage message = AssistantMessage.builder().content(chunk.content()).toolCalls(whole).build();
		return new ChatResponse(List.of(new Generation(message, generation(chunk.finishReason()))), metadata.build());
	}

	private @Nullable String modelOf(@Nullable String endpoint) {
		LlmEndpoint served = (endpoint != null) ? this.endpoints.endpoint(endpoint) : null;
		return (served != null) ? served.settings().upstream().model() : null;
	}

	private static ChatGenerationMetadata generation(@Nullable String finishReason) {
		return (finishReason != null) ? ChatGenerationMetadata.builder().finishReason(finishReason).build()
				: ChatGenerationMetadata.NULL;
	}

	private static DefaultUsage usage(dev.llmresilience.chat.Usage usage) {
		int prompt = (usage.promptTokens() != null) ? usage.promptTokens() : 0;
		int completion = (usage.completionTokens() != null) ? usage.completionTokens() : 0;
		return new DefaultUsage(prompt, completion, prompt + completion);
	}

	private static AssistantMessage.ToolCall toolCall(ToolCall call) {
		return new AssistantMessage.ToolCall(call.id(), "function", call.name(), call.arguments());
	}

	/** The pieces of a stream's tool calls, joined by index until the answer ends. */
	private static final class ToolCallBuffer {

		private final Map<Integer, String[]> calls = new TreeMap<>();

		void add(List<ToolCallDelta> deltas) {
			for (ToolCallDelta delta : deltas) {
				String[] call = this.calls.computeIfAbsent(delta.index(), (index) -> new String[] { "", "", "" });
				call[0] = (delta.id() != null) ? delta.id() : call[0];
				call[1] = (delta.name() != null) ? delta.name() : call[1];
				call[2] = call[2] + delta.arguments();
			}
		}

		boolean pending() {
			return !this.calls.isEmpty();
		}

		List<AssistantMessage.ToolCall> drain() {
			List<AssistantMessage.ToolCall> whole = new ArrayList<>();
			this.calls.values().forEach((call) -> whole.add(new AssistantMessage.ToolCall(call[0], "function", call[1], call[2])));
			this.calls.clear();
			return whole;
		}

		// a stream that ended without a finish reason still hands over the calls it carried
		ChatResponse flush() {
			AssistantMessage message = AssistantMessage.builder().content("").toolCalls(drain()).build();
			return new ChatResponse(List.of(new Generation(message, ChatGenerationMetadata.NULL)));
		}

	}

}
