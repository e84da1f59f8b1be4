package dev.llmresilience.protocol.anthropic;

import java.util.ArrayList;
import java.util.List;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.failure.LlmUpstreamException;
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
import dev.llmresilience.protocol.openai.ReservedFields;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * A client of Anthropic's Messages API ({@code POST {base-url}/messages}) for one endpoint. One
 * subscription makes one HTTP call. An answer is read whole (up to the endpoint's
 * {@code max-response-size}); a stream is read event by event within the attempt's
 * {@link StreamLimits} and completes only at {@code message_stop}. Errors, in a status or inside a
 * stream, are mapped into the project's failure rules by {@link AnthropicErrors}; what the provider
 * says is redacted ({@link ProviderText}) and its token counts checked ({@link ReportedUsage}).
 */
final class AnthropicClient implements LlmClient, AutoCloseable {

	private static final String PATH = "/messages";

	private final ClientSettings settings;

	private final WebClient webClient;

	private final JsonMapper mapper;

	private final UpstreamFailures failures;

	private final AnthropicErrors errors;

	private final ProviderText providerText;

	private final ReportedUsage usage;

	private final Runnable onClose;

	/**
	 * Create a client.
	 * @param settings the endpoint's settings
	 * @param webClient a client whose base URL, headers and connector are set for the endpoint
	 * @param failures what the provider's failures stand for
	 * @param onClose releases what the client holds (its connection pool)
	 */
	public AnthropicClient(ClientSettings settings, WebClient webClient, UpstreamFailures failures, Runnable onClose) {
		this.settings = settings;
		this.webClient = webClient;
		this.mapper = WireJson.mapper();
		this.failures = failures;
		this.errors = new AnthropicErrors(settings.name(), failures, failures.secretsOf(settings));
		this.providerText = new ProviderText(settings, failures);
		this.usage = new ReportedUsage(settings.name());
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
			.exchangeToMono(this::read)).onErrorMap(this.providerText::classify);
	}

	/** Said here, not found by the default's reflection, which a native image answers only with hints. */
	@Override
	public boolean supportsStreaming() {
		return true;
	}

	@Override
	public Flux<CompletionDelta> stream(ChatRequest request) {
		return Flux.defer(() -> UpstreamHttp.post(this.webClient, PATH, body(request, true), true)
			.exchangeToFlux(this::readStream)).onErrorMap(this.providerText::classify);
	}

	private byte[] body(ChatRequest request, boolean stream) {
		ReservedFields.check(request);
		return this.mapper.writeValueAsBytes(AnthropicRequests.toWire(this.settings.model(), request, stream));
	}

	private Flux<CompletionDelta> readStream(ClientResponse response) {
		if (!UpstreamHttp.isEventStream(response)) {
			// An error status, or a server that answered with the whole message: read it like chat.
			return read(response).map(CompletionDelta::of).flux();
		}
		this.settings.observeRateLimits(this.failures, response.headers().asHttpHeaders());
		StreamLimits limits = new StreamLimits(this.settings);
		return limits.deltas(new AnthropicStreamReader(this.settings.name(), this.failures, this.errors, this.usage,
				this.providerText)
			.read(limits.events(response)));
	}

	private Mono<Completion> read(ClientResponse response) {
		return UpstreamHttp.read(response, this::interpret);
	}

	private Completion interpret(int status, HttpHeaders headers, String body) {
		this.settings.observeRateLimits(this.failures, headers);
		String name = this.settings.name();
		if (status < 200 || status >= 300) {
			AnthropicMessage error = WireJson.readOrNull(body, AnthropicMessage.class);
			AnthropicMessage.Error cause = (error != null) ? error.error() : null;
			throw MisconfigurationHint.explain(this.errors.classify(status, headers, cause), this.settings, PATH,
					(cause != null) ? this.errors.providerError(cause) : null);
		}
		AnthropicMessage message = WireJson.answer(name, body, AnthropicMessage.class);
		if ("error".equals(message.type()) || (message.error() != null && message.content() == null)) {
			throw this.errors.classifyInBand(message.error());
		}
		StringBuilder text = new StringBuilder();
		List<ToolCall> toolCalls = new ArrayList<>();
		for (AnthropicMessage.ContentBlock block : (message.content() != null) ? message.content()
				: List.<AnthropicMessage.ContentBlock>of()) {
			if (block.isText() && block.text() != null) {
				text.append(block.text());
			}
			else if (block.isToolUse() && block.name() != null) {
				toolCalls.add(new ToolCall((block.id() != null) ? block.id() : "", block.name(),
						(block.input() != null) ? block.input().toString() : "{}"));
			}
		}
		String finishReason = AnthropicMessage.finishReason(message.stopReason());
		LlmUpstreamException failure = this.failures.classifyCompletion(name, message.content() != null,
				text.toString(), !toolCalls.isEmpty(), finishReason);
		if (failure != null) {
			throw failure;
		}
		AnthropicMessage.Usage usage = message.usage();
		return new Completion(text.toString(), this.providerText.model(message.model()), finishReason, toolCalls,
				(usage != null) ? this.usage.read(usage.promptTokens(), usage.outputTokens()) : null);
	}

}
