package dev.llmresilience.protocol.openai;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmInvalidRequestException;
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
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * An OpenAI-compatible chat-completions client for one endpoint (OpenAI, Azure OpenAI's v1 API,
 * DeepSeek, OpenRouter, Ollama, vLLM, ...; with an {@link OpenAiDialect}, Azure OpenAI's deployment
 * API too). One subscription makes one HTTP call; the response is
 * read whole (up to the endpoint's {@code max-response-size}) and handed to the
 * {@link UpstreamFailures}. A streamed request asks for {@code stream_options.include_usage} and is
 * read event by event within the attempt's {@link StreamLimits}. Nothing a provider sends is logged
 * by the codecs, and what of it reaches an exception or an answer is redacted ({@link ProviderText}).
 */
final class OpenAiChatClient implements LlmClient, AutoCloseable {

	private static final Log logger = LogFactory.getLog(OpenAiChatClient.class);

	private final ClientSettings settings;

	private final WebClient webClient;

	private final JsonMapper mapper;

	private final UpstreamFailures failures;

	private final OpenAiDialect dialect;

	private final ProviderText providerText;

	private final ReportedUsage usage;

	private final OpenAiRequests requests;

	private volatile Runnable onClose = () -> {
	};

	private volatile boolean streams = true;

	private volatile boolean streamOptions = true;

	/**
	 * Create a client.
	 * @param settings the endpoint's settings
	 * @param webClient a client whose base URL, headers and connector are set for the endpoint
	 * @param mapper the mapper for the wire format
	 * @param failures what the provider's failures stand for
	 */
	public OpenAiChatClient(ClientSettings settings, WebClient webClient, JsonMapper mapper,
			UpstreamFailures failures) {
		this(settings, webClient, mapper, failures, OpenAiDialect.OPENAI);
	}

	/**
	 * Create a client for a variant of the OpenAI format.
	 * @param settings the endpoint's settings
	 * @param webClient a client whose base URL, headers and connector are set for the endpoint
	 * @param mapper the mapper for the wire format
	 * @param failures what the provider's failures stand for
	 * @param dialect where requests go and what their body carries
	 */
	public OpenAiChatClient(ClientSettings settings, WebClient webClient, JsonMapper mapper,
			UpstreamFailures failures, OpenAiDialect dialect) {
		this.settings = settings;
		this.webClient = webClient;
		this.mapper = mapper;
		this.failures = failures;
		this.dialect = dialect;
		this.providerText = new ProviderText(settings, failures);
		this.usage = new ReportedUsage(settings.name());
		this.requests = new OpenAiRequests(mapper);
	}

	OpenAiChatClient onClose(Runnable onClose) {
		this.onClose = onClose;
		return this;
	}

	/** Releases the client's connection pool when the factory created one for it. */
	@Override
	public void close() {
		this.onClose.run();
	}

	@Override
	public Mono<Completion> chat(ChatRequest request) {
		return Mono.defer(() -> UpstreamHttp
			.post(this.webClient, this.dialect.path(), this.mapper.writeValueAsBytes(toWire(request, false, false)), false)
			.exchangeToMono((response) -> UpstreamHttp.read(response, this::interpret)))
			.onErrorMap(this.providerText::classify);
	}

	@Override
	public Flux<CompletionDelta> stream(ChatRequest request) {
		if (!this.streams) {
			return chat(request).map(CompletionDelta::of).flux();
		}
		boolean withOptions = this.streamOptions;
		return send(request, withOptions).onErrorResume((error) -> this.streams && refusedStreaming(error), (error) -> {
			// Some OpenAI-compatible servers reject stream_options, or streaming, with a 400: a call sent
			// upstream as a stream must still work against them, so drop what they refuse, for good.
			if (withOptions && mentions(error, "stream_options")) {
				this.streamOptions = false;
				logger.info("Endpoint '" + this.settings.name() + "' refuses stream_options: streaming without it "
						+ "(no token counts on streamed answers)");
				return send(request, false);
			}
			this.streams = false;
			logger.warn("Endpoint '" + this.settings.name() + "' refuses streamed requests: sending them as plain "
					+ "requests from now on (set its upstream-streaming: false to say so; first-token-timeout then "
					+ "cannot bound its calls)");
			return chat(request).map(CompletionDelta::of).flux();
		});
	}

	@Override
	public boolean supportsStreaming() {
		return true;
	}

	private Flux<CompletionDelta> send(ChatRequest request, boolean withOptions) {
		return Flux.defer(() -> UpstreamHttp
			.post(this.webClient, this.dialect.path(), this.mapper.writeValueAsBytes(toWire(request, true, withOptions)),
					true)
			.exchangeToFlux(this::readStream)).onErrorMap(this.providerText::classify);
	}

	private static boolean refusedStreaming(Throwable error) {
		if (!(error instanceof LlmInvalidRequestException invalid) || invalid.status() != 400) {
			return false;
		}
		String message = String.valueOf(invalid.getMessage()).toLowerCase(Locale.ROOT);
		return message.contains("stream_options") || (message.contains("stream") && (message.contains("not supported")
				|| message.contains("unsupported") || message.contains("unrecognized") || message.contains("unknown")));
	}

	private static boolean mentions(Throwable error, String word) {
		return String.valueOf(error.getMessage()).contains(word);
	}

	private Flux<CompletionDelta> readStream(ClientResponse response) {
		if (!UpstreamHttp.isEventStream(response)) {
			// An error status, or a provider that ignored "stream" (a JSON body, or one
			// with no content type at all): read the body whole, exactly like chat.
			return UpstreamHttp.read(response, this::interpret).map(CompletionDelta::of).flux();
		}
		this.settings.observeRateLimits(this.failures, response.headers().asHttpHeaders());
		StreamLimits limits = new StreamLimits(this.settings);
		return limits.deltas(new OpenAiStreamReader(this.settings.name(), this.failures,
				(error) -> classifyErrorBody(error, HttpHeaders.EMPTY), this.usage, this.providerText)
			.read(limits.events(response)));
	}

	// The body is refused rather than sent with two equal keys, whichever a provider would keep.
	private OpenAiChatRequest toWire(ChatRequest request, boolean stream, boolean withOptions) {
		ReservedFields.check(request);
		return this.requests.toWire(request, this.dialect.sendsModel() ? this.settings.model() : null, stream,
				withOptions && this.dialect.streamUsage());
	}

	private Completion interpret(int status, HttpHeaders headers, String body) {
		this.settings.observeRateLimits(this.failures, headers);
		String name = this.settings.name();
		if (status < 200 || status >= 300) {
			ProviderError error = readError(body);
			throw MisconfigurationHint.explain(this.failures.classifyStatus(name, status, headers, error),
					this.settings, this.dialect.path(), error);
		}
		OpenAiChatCompletion completion = WireJson.answer(name, body, OpenAiChatCompletion.class);
		if (completion.error() != null && (completion.choices() == null || completion.choices().isEmpty())) {
			throw classifyErrorBody(completion.error(), headers);
		}
		List<OpenAiChatCompletion.Choice> choices = (completion.choices() != null) ? completion.choices() : List.of();
		OpenAiChatCompletion.Choice first = choices.isEmpty() ? null : choices.get(0);
		OpenAiChatCompletion.Message message = (first != null) ? first.message() : null;
		String content = (message != null) ? message.content() : null;
		List<ToolCall> toolCalls = toolCalls(message);
		String finishReason = (first != null) ? first.finishReason() : null;
		LlmUpstreamException failure = this.failures.classifyCompletion(name, first != null && message != null,
				content, !toolCalls.isEmpty(), finishReason);
		if (failure != null) {
			throw failure;
		}
		OpenAiChatCompletion.Usage usage = completion.usage();
		return new Completion((content != null) ? content : "", this.providerText.model(completion.model()),
				finishReason, toolCalls,
				(usage != null) ? this.usage.read(usage.promptTokens(), usage.completionTokens()) : null);
	}

	private @Nullable ProviderError readError(String body) {
		OpenAiChatCompletion parsed = WireJson.readOrNull(body, OpenAiChatCompletion.class);
		return (parsed != null && parsed.error() != null) ? providerError(parsed.error()) : null;
	}

	// An error object on HTTP 200 (a body, or an event of a stream) is classified as the status its code names.
	private LlmException classifyErrorBody(OpenAiChatCompletion.Error error, HttpHeaders headers) {
		ProviderError provider = providerError(error);
		return MisconfigurationHint.explain(
				this.failures.classifyStatus(this.settings.name(), statusOf(error), headers, provider), this.settings,
				this.dialect.path(), provider);
	}

	private ProviderError providerError(OpenAiChatCompletion.Error error) {
		return this.providerText.error(error.type(), error.code(), error.message());
	}

	private static int statusOf(OpenAiChatCompletion.Error error) {
		if (error.code() instanceof Number number && number.intValue() >= 400 && number.intValue() < 600) {
			return number.intValue();
		}
		return 500;
	}

	private static List<ToolCall> toolCalls(OpenAiChatCompletion.@Nullable Message message) {
		if (message == null || message.toolCalls() == null) {
			return List.of();
		}
		List<ToolCall> calls = new ArrayList<>();
		for (OpenAiChatCompletion.ToolCall call : message.toolCalls()) {
			OpenAiChatCompletion.Function function = call.function();
			if (function != null && function.name() != null) {
				calls.add(new ToolCall((call.id() != null) ? call.id() : "", function.name(),
						(function.arguments() != null) ? function.arguments() : ""));
			}
		}
		return calls;
	}

}
