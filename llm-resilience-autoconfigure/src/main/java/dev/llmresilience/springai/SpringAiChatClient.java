package dev.llmresilience.springai;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.protocol.UpstreamFailures;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.metadata.ChatResponseMetadata;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import org.springframework.ai.model.tool.ToolCallingChatOptions;

/**
 * An endpoint served by a Spring AI {@link ChatModel} bean (Anthropic, Bedrock, Vertex, Ollama,
 * ...): one attempt is one {@code call} or {@code stream} of the model, its options built from the
 * model's own (so that its type is the one the model expects) with the endpoint's {@code model},
 * the request's temperature and max tokens, {@code top_p}, {@code top_k}, {@code stop},
 * {@code frequency_penalty} and {@code presence_penalty} from {@code extra}, and the request's tools.
 * The model's blocking {@code call} runs on a bounded-elastic thread. Its failures are classified by
 * {@link SpringAiFailures}; the endpoint's retry, breaker and bulkhead wrap it like any client.
 */
final class SpringAiChatClient implements LlmClient {

	private final ClientSettings settings;

	private final ChatModel model;

	private final UpstreamFailures upstreamFailures;

	private final SpringAiFailures failures;

	SpringAiChatClient(ClientSettings settings, ChatModel model, UpstreamFailures upstreamFailures) {
		this.settings = settings;
		this.model = model;
		this.upstreamFailures = upstreamFailures;
		this.failures = new SpringAiFailures(upstreamFailures);
	}

	@Override
	public Mono<Completion> chat(ChatRequest request) {
		return Mono.fromCallable(() -> this.model.call(prompt(request)))
			.subscribeOn(Schedulers.boundedElastic())
			.onErrorMap((error) -> this.failures.classify(this.settings.name(), error))
			.map(this::completion);
	}

	/** Said here, not found by the default's reflection, which a native image answers only with hints. */
	@Override
	public boolean supportsStreaming() {
		return true;
	}

	@Override
	public Flux<CompletionDelta> stream(ChatRequest request) {
		return Flux.defer(() -> {
			int[] calls = new int[1];
			return this.model.stream(prompt(request)).map((response) -> delta(response, calls));
		})
			.onErrorMap((error) -> !(error instanceof UnsupportedOperationException),
					(error) -> this.failures.classify(this.settings.name(), error));
	}

	private Prompt prompt(ChatRequest request) {
		ChatOptions.Builder<?> options = this.model.getOptions().mutate().model(this.settings.model());
		if (request.temperature() != null) {
			options.temperature(request.temperature());
		}
		if (request.maxTokens() != null) {
			options.maxTokens(request.maxTokens());
		}
		Map<String, Object> extra = request.extra();
		if (extra.get("top_p") instanceof Number topP) {
			options.topP(topP.doubleValue());
		}
		if (extra.get("top_k") instanceof Number topK) {
			options.topK(topK.intValue());
		}
		if (extra.get("frequency_penalty") instanceof Number penalty) {
			options.frequencyPenalty(penalty.doubleValue());
		}
		if (extra.get("presence_penalty") instanceof Number penalty) {
			options.presencePenalty(penalty.doubleValue());
		}
		Object stop = extra.get("stop");
		if (stop instanceof String one) {
			options.stopSequences(List.of(one));
		}
		else if (stop instanceof List<?> many) {
			options.stopSequences(many.stream().map(String::valueOf).toList());
		}
		if (!request.tools().isEmpty() && options instanceof ToolCallingChatOptions.Builder<?> tools) {
			tools.toolCallbacks(SpringAiMessages.callbacks(request.tools()));
		}
		return new Prompt(SpringAiMessages.toSpringAi(request.messages()), options.build());
	}

	private Completion completion(ChatResponse response) {
		Generation generation = response.getResult();
		AssistantMessage output = (generation != null) ? generation.getOutput() : null;
		String content = (output != null) ? output.getText() : null;
		List<ToolCall> calls = (output != null) ? toolCalls(output) : List.of();
		String finishReason = (generation != null) ? generation.getMetadata().getFinishReason() : null;
		LlmUpstreamException failure = this.upstreamFailures.classifyCompletion(this.settings.name(), output != null, content,
				!calls.isEmpty(), finishReason);
		if (failure != null) {
			throw failure;
		}
		return new Completion((content != null) ? content : "", model(response), finishReason, calls, usage(response));
	}

	private CompletionDelta delta(ChatResponse response, int[] calls) {
		Generation generation = response.getResult();
		AssistantMessage output = (generation != null) ? generation.getOutput() : null;
		List<ToolCallDelta> deltas = new ArrayList<>();
		if (output != null) {
			// Spring AI hands over each call whole: one delta per call, numbered across the stream
			for (ToolCall call : toolCalls(output)) {
				deltas.add(new ToolCallDelta(calls[0]++, call.id(), call.name(), call.arguments()));
			}
		}
		String text = (output != null && output.getText() != null) ? output.getText() : "";
		String finishReason = (generation != null) ? blankToNull(generation.getMetadata().getFinishReason()) : null;
		return new CompletionDelta(text, deltas, finishReason, usage(response), model(response));
	}

	private static List<ToolCall> toolCalls(AssistantMessage output) {
		return output.getToolCalls().stream()
			.map((call) -> new ToolCall(call.id(), call.name(), (call.arguments() != null) ? call.arguments() : ""))
			.toList();
	}

	private static @Nullable String model(ChatResponse response) {
		ChatResponseMetadata metadata = response.getMetadata();
		return blankToNull(metadata.getModel());
	}

	// Spring AI reports no usage as zeros (EmptyUsage): that is "not reported" here.
	private static @Nullable Usage usage(ChatResponse response) {
		org.springframework.ai.chat.metadata.Usage usage = response.getMetadata().getUsage();
		Integer prompt = usage.getPromptTokens();
		Integer completion = usage.getCompletionTokens();
		if ((prompt == null || prompt == 0) && (completion == null || completion == 0)) {
			return null;
		}
		return new Usage(prompt, completion);
	}

	private static @Nullable String blankToNull(@Nullable String text) {
		return (text == null || text.isBlank()) ? null : text;
	}

}
