package dev.llmresilience.protocol;

import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.failure.ProviderError;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * An OpenAI-compatible chat-completions client for one endpoint (OpenAI, Azure OpenAI's v1 API,
 * DeepSeek, OpenRouter, Ollama, vLLM, ...). One subscription makes one HTTP call; the response is
 * read whole (up to the endpoint's {@code max-response-size}) and handed to the
 * {@link FailureClassifier}. A streamed request asks for {@code stream_options.include_usage} and is
 * read event by event ({@link SseEvents}), within the attempt's {@link StreamLimits}. Nothing a
 * provider sends is logged by the codecs, and what of it reaches an exception is redacted
 * ({@link ProviderText}).
 */
public final class OpenAiChatClient implements LlmClient, AutoCloseable {

	private final ClientSettings settings;

	private final WebClient webClient;

	private final JsonMapper mapper;

	private final FailureClassifier classifier;

	private final ProviderText providerText;

	private final ReportedUsage usage;

	private final SseEvents events;

	private volatile Runnable onClose = () -> {
	};

	/**
	 * Create a client.
	 * @param settings the endpoint's settings
	 * @param webClient a client whose base URL, headers and connector are set for the endpoint
	 * @param mapper the mapper for the wire format
	 * @param classifier the classifier
	 */
	public OpenAiChatClient(ClientSettings settings, WebClient webClient, JsonMapper mapper,
			FailureClassifier classifier) {
		this.settings = settings;
		this.webClient = webClient;
		this.mapper = mapper;
		this.classifier = classifier;
		this.providerText = new ProviderText(settings, classifier);
		this.usage = new ReportedUsage(settings.name());
		this.events = new SseEvents((int) Math.min(Integer.MAX_VALUE, settings.maxResponseSize()));
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
		return Mono.defer(() -> this.webClient.post()
			.uri("/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.APPLICATION_JSON)
			.bodyValue(this.mapper.writeValueAsBytes(toWire(request, false)))
			.exchangeToMono(this::read)).onErrorMap(this.providerText::classify);
	}

	@Override
	public Flux<CompletionDelta> stream(ChatRequest request) {
		return Flux.defer(() -> this.webClient.post()
			.uri("/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.TEXT_EVENT_STREAM, MediaType.APPLICATION_JSON)
			.bodyValue(this.mapper.writeValueAsBytes(toWire(request, true)))
			.exchangeToFlux(this::readStream)).onErrorMap(this.providerText::classify);
	}

	private Flux<CompletionDelta> readStream(ClientResponse response) {
		HttpHeaders headers = response.headers().asHttpHeaders();
		MediaType type = headers.getContentType();
		boolean eventStream = type == null || MediaType.TEXT_EVENT_STREAM.isCompatibleWith(type);
		if (!response.statusCode().is2xxSuccessful() || !eventStream) {
			// An error status, or a provider that ignored "stream": read the body whole, exactly like chat.
			return read(response).map(OpenAiChatClient::asDelta).flux();
		}
		StreamLimits limits = new StreamLimits(this.settings);
		return new OpenAiStreamReader(this.settings.name(), this.mapper, this.classifier,
				(error) -> classifyErrorBody(error, HttpHeaders.EMPTY), limits, this.usage, this.providerText)
			.read(this.events.read(limits.countBytes(response.body(BodyExtractors.toDataBuffers()))));
	}

	private static CompletionDelta asDelta(Completion completion) {
		List<ToolCallDelta> calls = new ArrayList<>();
		for (int i = 0; i < completion.toolCalls().size(); i++) {
			ToolCall call = completion.toolCalls().get(i);
			calls.add(new ToolCallDelta(i, call.id(), call.name(), call.arguments()));
		}
		return new CompletionDelta(completion.content(), calls, completion.finishReason(), completion.usage(),
				completion.model());
	}

	// The body is refused rather than sent with two equal keys, whichever a provider would keep.
	private OpenAiChatRequest toWire(ChatRequest request, boolean stream) {
		ReservedFields.check(request);
		List<OpenAiChatRequest.Message> messages = request.messages()
			.stream()
			.map((message) -> new OpenAiChatRequest.Message(message.role(), message.content()))
			.toList();
		return new OpenAiChatRequest(this.settings.model(), messages, request.temperature(), request.maxTokens(),
				stream ? Boolean.TRUE : null, stream ? new OpenAiChatRequest.StreamOptions(true) : null, request.extra());
	}

	// Read as bytes: Spring's String decoder logs what it decodes at DEBUG, and a provider's body may
	// repeat the key; JSON is UTF-8 (RFC 8259) unless the response says otherwise.
	private Mono<Completion> read(ClientResponse response) {
		int status = response.statusCode().value();
		HttpHeaders headers = response.headers().asHttpHeaders();
		MediaType type = headers.getContentType();
		Charset charset = (type != null && type.getCharset() != null) ? type.getCharset() : StandardCharsets.UTF_8;
		return response.bodyToMono(byte[].class)
			.map((bytes) -> new String(bytes, charset))
			.defaultIfEmpty("")
			.map((body) -> interpret(status, headers, body));
	}

	private Completion interpret(int status, HttpHeaders headers, String body) {
		String name = this.settings.name();
		if (status < 200 || status >= 300) {
			throw this.classifier.classifyStatus(name, status, headers, readError(body));
		}
		OpenAiChatCompletion completion = parse(body);
		if (completion.error() != null && (completion.choices() == null || completion.choices().isEmpty())) {
			throw classifyErrorBody(completion.error(), headers);
		}
		List<OpenAiChatCompletion.Choice> choices = (completion.choices() != null) ? completion.choices() : List.of();
		OpenAiChatCompletion.Choice first = choices.isEmpty() ? null : choices.get(0);
		OpenAiChatCompletion.Message message = (first != null) ? first.message() : null;
		String content = (message != null) ? message.content() : null;
		List<ToolCall> toolCalls = toolCalls(message);
		String finishReason = (first != null) ? first.finishReason() : null;
		LlmUpstreamException failure = this.classifier.classifyCompletion(name, first != null && message != null,
				content, !toolCalls.isEmpty(), finishReason);
		if (failure != null) {
			throw failure;
		}
		return new Completion((content != null) ? content : "", this.providerText.model(completion.model()),
				finishReason, toolCalls, this.usage.read(completion.usage()));
	}

	private OpenAiChatCompletion parse(String body) {
		try {
			OpenAiChatCompletion completion = this.mapper.readValue(body, OpenAiChatCompletion.class);
			if (completion == null) {
				throw malformed("The response body is empty");
			}
			return completion;
		}
		catch (JacksonException ex) {
			throw malformed(body.isBlank() ? "The response body is empty" : "The response body is not valid JSON");
		}
	}

	private @Nullable ProviderError readError(String body) {
		if (body.isBlank()) {
			return null;
		}
		try {
			OpenAiChatCompletion parsed = this.mapper.readValue(body, OpenAiChatCompletion.class);
			return (parsed != null && parsed.error() != null) ? providerError(parsed.error()) : null;
		}
		catch (JacksonException ex) {
			return null;
		}
	}

	// An error object on HTTP 200 (a body, or an event of a stream) is classified as the status its code names.
	private LlmException classifyErrorBody(OpenAiChatCompletion.Error error, HttpHeaders headers) {
		return this.classifier.classifyStatus(this.settings.name(), statusOf(error), headers, providerError(error));
	}

	private ProviderError providerError(OpenAiChatCompletion.Error error) {
		return this.providerText.error(error);
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

	private LlmUpstreamException malformed(String message) {
		return new LlmUpstreamException(this.settings.name(), Outcome.MALFORMED_RESPONSE, 200, null, message, null);
	}


}
