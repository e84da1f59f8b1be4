package dev.llmresilience.protocol;

import java.util.ArrayList;
import java.util.List;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.failure.ProviderError;
import dev.llmresilience.failure.Redaction;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * An OpenAI-compatible chat-completions client for one endpoint (OpenAI, Azure OpenAI's v1 API,
 * DeepSeek, OpenRouter, Ollama, vLLM, ...). One subscription makes one HTTP call; the response is
 * read whole (up to the endpoint's {@code max-response-size}) and handed to the
 * {@link FailureClassifier}. A streamed request asks for {@code stream_options.include_usage} and is
 * read event by event with Spring's server-sent-event decoder.
 */
public final class OpenAiChatClient implements LlmClient, AutoCloseable {

	private static final ParameterizedTypeReference<ServerSentEvent<String>> EVENTS = new ParameterizedTypeReference<>() {
	};

	private static final int SHORTEST_SECRET = 8;

	private static final String COMPLETIONS = "/chat/completions";

	private final ClientSettings settings;

	private final WebClient webClient;

	private final JsonMapper mapper;

	private final FailureClassifier classifier;

	private final List<String> secrets;

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
		this.secrets = secrets(settings);
	}

	/**
	 * What a provider's message must not repeat: the key and the header values (an organization or
	 * project id, an Azure {@code api-key}). Values shorter than {@value #SHORTEST_SECRET} characters
	 * are no secrets, and redacting them would garble the message (a version such as {@code v1}).
	 */
	private static List<String> secrets(ClientSettings settings) {
		List<String> secrets = new ArrayList<>();
		if (settings.apiKey().reveal() != null) {
			secrets.add(settings.apiKey().reveal());
		}
		settings.headers()
			.values()
			.stream()
			.filter((value) -> value.length() >= SHORTEST_SECRET)
			.forEach(secrets::add);
		return List.copyOf(secrets);
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
			.uri(COMPLETIONS)
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.APPLICATION_JSON)
			.bodyValue(this.mapper.writeValueAsBytes(toWire(request, false)))
			.exchangeToMono(this::read));
	}

	@Override
	public Flux<CompletionDelta> stream(ChatRequest request) {
		return Flux.defer(() -> this.webClient.post()
			.uri(COMPLETIONS)
			.contentType(MediaType.APPLICATION_JSON)
			.accept(MediaType.TEXT_EVENT_STREAM, MediaType.APPLICATION_JSON)
			.bodyValue(this.mapper.writeValueAsBytes(toWire(request, true)))
			.exchangeToFlux(this::readStream));
	}

	private Flux<CompletionDelta> readStream(ClientResponse response) {
		HttpHeaders headers = response.headers().asHttpHeaders();
		MediaType type = headers.getContentType();
		boolean eventStream = type == null || MediaType.TEXT_EVENT_STREAM.isCompatibleWith(type);
		if (!response.statusCode().is2xxSuccessful() || !eventStream) {
			// An error status, or a provider that ignored "stream": read the body whole, exactly like chat.
			return read(response).map(OpenAiChatClient::asDelta).flux();
		}
		return new OpenAiStreamReader(this.settings.name(), this.mapper, this.classifier,
				(error) -> classifyErrorBody(error, HttpHeaders.EMPTY))
			.read(response.bodyToFlux(EVENTS));
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

	private OpenAiChatRequest toWire(ChatRequest request, boolean stream) {
		List<OpenAiChatRequest.Message> messages = request.messages()
			.stream()
			.map((message) -> new OpenAiChatRequest.Message(message.role(), message.content()))
			.toList();
		return new OpenAiChatRequest(this.settings.model(), messages, request.temperature(), request.maxTokens(),
				stream ? Boolean.TRUE : null, stream ? new OpenAiChatRequest.StreamOptions(true) : null, request.extra());
	}

	private Mono<Completion> read(ClientResponse response) {
		int status = response.statusCode().value();
		HttpHeaders headers = response.headers().asHttpHeaders();
		return response.bodyToMono(String.class).defaultIfEmpty("").map((body) -> interpret(status, headers, body));
	}

	private Completion interpret(int status, HttpHeaders headers, String body) {
		String name = this.settings.name();
		if (status < 200 || status >= 300) {
			ProviderError error = readError(body);
			throw MisconfigurationHint.explain(this.classifier.classifyStatus(name, status, headers, error),
					this.settings, COMPLETIONS, error);
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
		OpenAiChatCompletion.Usage usage = completion.usage();
		return new Completion((content != null) ? content : "", completion.model(), finishReason, toolCalls,
				(usage != null) ? new Usage(usage.promptTokens(), usage.completionTokens()) : null);
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
		ProviderError provider = providerError(error);
		return MisconfigurationHint.explain(
				this.classifier.classifyStatus(this.settings.name(), statusOf(error), headers, provider), this.settings,
				COMPLETIONS, provider);
	}

	private ProviderError providerError(OpenAiChatCompletion.Error error) {
		String message = (error.message() != null) ? Redaction.redact(error.message(), this.secrets) : null;
		String code = (error.code() != null) ? String.valueOf(error.code()) : null;
		return new ProviderError(error.type(), code, message);
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
