package dev.llmresilience.protocol.openai;

import java.util.ArrayList;
import java.util.List;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.failure.LlmUpstreamException.ProviderError;
import dev.llmresilience.protocol.ClientSettings;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.protocol.MisconfigurationHint;
import dev.llmresilience.protocol.ProviderText;
import dev.llmresilience.protocol.ReportedUsage;
import dev.llmresilience.protocol.StreamLimits;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.UpstreamHttp;
import dev.llmresilience.protocol.WireJson;
import dev.llmresilience.protocol.openai.OpenAiResponsesWire.OutputItem;
import dev.llmresilience.protocol.openai.OpenAiResponsesWire.Response;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A client of OpenAI's Responses API ({@code protocol: openai-responses}) for one endpoint:
 * {@code POST {base-url}/responses}, with the key, headers, connection pool, size caps, rate-limit
 * headers and failure rules of the chat-completions client. One subscription makes one HTTP call.
 * An answer's {@code message} items' {@code output_text} is the content (a {@code refusal} part is
 * not, as chat completions' {@code refusal} is not), its {@code function_call} items the tool
 * calls, its {@code status} and {@code incomplete_details.reason} the finish reason, a
 * {@code failed} response or an error the failure its code stands for
 * ({@link OpenAiResponsesErrors}); a stream is read by {@link OpenAiResponsesStreamReader}.
 */
final class OpenAiResponsesClient implements LlmClient, AutoCloseable {

	/** The path below the base URL. */
	static final String PATH = "/responses";

	private final ClientSettings settings;

	private final WebClient webClient;

	private final JsonMapper mapper;

	private final UpstreamFailures failures;

	private final ProviderText providerText;

	private final ReportedUsage usage;

	private final OpenAiResponsesRequests requests;

	private final OpenAiResponsesErrors errors;

	private final Runnable onClose;

	OpenAiResponsesClient(ClientSettings settings, WebClient webClient, UpstreamFailures failures, Runnable onClose) {
		this.settings = settings;
		this.webClient = webClient;
		this.mapper = WireJson.mapper();
		this.failures = failures;
		this.providerText = new ProviderText(settings, failures);
		this.usage = new ReportedUsage(settings.name());
		this.requests = new OpenAiResponsesRequests(this.mapper);
		this.errors = new OpenAiResponsesErrors(settings, failures, this.providerText, PATH);
		this.onClose = onClose;
	}

	/** Releases the client's connection pool. */
	@Override
	public void close() {
		this.onClose.run();
	}

	@Override
	public Mono<Completion> chat(ChatRequest request) {
		return Mono.defer(() -> UpstreamHttp.post(this.webClient, PATH, body(request, false), false)
			.exchangeToMono((response) -> UpstreamHttp.read(response, this::interpret)))
			.onErrorMap(this.providerText::classify);
	}

	@Override
	public Flux<CompletionDelta> stream(ChatRequest request) {
		return Flux.defer(() -> UpstreamHttp.post(this.webClient, PATH, body(request, true), true)
			.exchangeToFlux(this::readStream)).onErrorMap(this.providerText::classify);
	}

	@Override
	public boolean supportsStreaming() {
		return true;
	}

	private byte[] body(ChatRequest request, boolean stream) {
		return this.mapper.writeValueAsBytes(this.requests.toWire(request, this.settings.model(), stream));
	}

	private Flux<CompletionDelta> readStream(ClientResponse response) {
		if (!UpstreamHttp.isEventStream(response)) {
			// An error status, or a server that ignored "stream": read the body whole, exactly like chat.
			return UpstreamHttp.read(response, this::interpret).map(CompletionDelta::of).flux();
		}
		this.settings.observeRateLimits(this.failures, response.headers().asHttpHeaders());
		StreamLimits limits = new StreamLimits(this.settings);
		return limits.deltas(new OpenAiResponsesStreamReader(this.settings.name(), this.failures, this.errors,
				this.usage, this.providerText)
			.read(limits.events(response)));
	}

	private Completion interpret(int status, HttpHeaders headers, String body) {
		this.settings.observeRateLimits(this.failures, headers);
		String name = this.settings.name();
		if (status < 200 || status >= 300) {
			Response parsed = WireJson.readOrNull(body, Response.class);
			OpenAiChatCompletion.Error error = (parsed != null) ? parsed.error() : null;
			ProviderError provider = (error != null) ? this.errors.provider(error) : null;
			throw MisconfigurationHint.explain(this.failures.classifyStatus(name, status, headers, provider),
					this.settings, PATH, provider);
		}
		Response response = WireJson.answer(name, body, Response.class);
		if (response.error() != null && (response.output() == null || response.output().isEmpty()
				|| OpenAiResponsesWire.FAILED.equals(response.status()))) {
			throw this.errors.classify(response.error(), headers);
		}
		if (OpenAiResponsesWire.FAILED.equals(response.status())) {
			throw this.errors.classify(null, headers);
		}
		List<OutputItem> output = (response.output() != null) ? response.output() : List.of();
		String content = text(output);
		List<ToolCall> toolCalls = toolCalls(output);
		String finishReason = response.finishReason(!toolCalls.isEmpty());
		LlmUpstreamException failure = this.failures.classifyCompletion(name, response.output() != null, content,
				!toolCalls.isEmpty(), finishReason);
		if (failure != null) {
			throw failure;
		}
		return new Completion(content, this.providerText.model(response.model()), finishReason, toolCalls,
				usage(response));
	}

	private @Nullable Usage usage(Response response) {
		OpenAiResponsesWire.Usage counts = response.usage();
		return (counts != null) ? this.usage.read(counts.inputTokens(), counts.outputTokens()) : null;
	}

	private static String text(List<OutputItem> output) {
		StringBuilder text = new StringBuilder();
		for (OutputItem item : output) {
			if (item.isMessage() && item.content() != null) {
				for (OpenAiResponsesWire.OutputContent part : item.content()) {
					if ("output_text".equals(part.type()) && part.text() != null) {
						text.append(part.text());
					}
				}
			}
		}
		return text.toString();
	}

	private static List<ToolCall> toolCalls(List<OutputItem> output) {
		List<ToolCall> calls = new ArrayList<>();
		for (OutputItem item : output) {
			if (item.isFunctionCall() && item.name() != null) {
				String id = (item.callId() != null) ? item.callId() : (item.id() != null) ? item.id() : "";
				calls.add(new ToolCall(id, item.name(), (item.arguments() != null) ? item.arguments() : ""));
			}
		}
		return calls;
	}

}
