package dev.llmresilience.protocol.openai;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.ProviderText;
import dev.llmresilience.protocol.ReportedUsage;
import dev.llmresilience.protocol.StreamLimits.StreamEnd;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.WireJson;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;

import org.springframework.http.codec.ServerSentEvent;

/**
 * Turns the server-sent events of one streamed completion into {@link CompletionDelta}s.
 * {@code SseEvents} has already dealt with the framing ({@code :} comments and keep-alives, CRLF,
 * multi-line {@code data}); this reads each event's JSON, follows the first choice, ends at
 * {@code [DONE]}, and turns an error sent as an event into the failure it stands for. The token
 * counts are checked ({@link ReportedUsage}) and the model redacted ({@link ProviderText}).
 */
final class OpenAiStreamReader {

	private static final String DONE = "[DONE]";

	private final String endpoint;

	private final UpstreamFailures failures;

	private final Function<OpenAiChatCompletion.Error, LlmException> errorEvent;

	private final ReportedUsage usage;

	private final ProviderText providerText;

	/**
	 * Create a reader.
	 * @param endpoint the endpoint's name
	 * @param failures what the provider's failures stand for
	 * @param errorEvent classifies an error the provider sent as an event, as it would an error body
	 * @param usage checks the token counts
	 * @param providerText makes what the provider names safe to show
	 */
	OpenAiStreamReader(String endpoint, UpstreamFailures failures,
			Function<OpenAiChatCompletion.Error, LlmException> errorEvent, ReportedUsage usage,
			ProviderText providerText) {
		this.endpoint = endpoint;
		this.failures = failures;
		this.errorEvent = errorEvent;
		this.usage = usage;
		this.providerText = providerText;
	}

	/**
	 * Read a stream.
	 * @param events the decoded events of one response
	 * @return the deltas; completes when the body ends after {@code [DONE]}, and fails when it ends
	 * before it
	 */
	Flux<CompletionDelta> read(Flux<ServerSentEvent<String>> events) {
		return Flux.defer(() -> {
			StreamEnd end = new StreamEnd();
			return end.bounded(events.<CompletionDelta>handle((event, sink) -> decode(event, sink, end)))
				.concatWith(Mono.defer(() -> end.isReached() ? Mono.empty()
						: Mono.error(this.failures.truncatedStream(this.endpoint))));
		});
	}

	private void decode(ServerSentEvent<String> event, SynchronousSink<CompletionDelta> sink, StreamEnd end) {
		if (end.isReached()) {
			// read on to the body's end, so the connection goes back to the pool (StreamEnd)
			return;
		}
		String data = event.data();
		boolean errorEvent = "error".equals(event.event());
		if ((data == null || data.isBlank()) && !errorEvent) {
			return;
		}
		if (data != null && DONE.equals(data.strip())) {
			end.reached();
			return;
		}
		OpenAiChatChunk chunk = parse(data);
		if (chunk == null) {
			sink.error(WireJson.malformed(this.endpoint, "A stream event is not valid JSON"));
		}
		else if (chunk.error() != null || errorEvent) {
			OpenAiChatCompletion.Error error = (chunk.error() != null) ? chunk.error()
					: new OpenAiChatCompletion.Error(null, null, null);
			sink.error(this.errorEvent.apply(error));
		}
		else {
			sink.next(delta(chunk));
		}
	}

	private static @Nullable OpenAiChatChunk parse(@Nullable String data) {
		if (data == null || data.isBlank()) {
			return new OpenAiChatChunk(null, null, null, null);
		}
		return WireJson.readOrNull(data, OpenAiChatChunk.class);
	}

	private CompletionDelta delta(OpenAiChatChunk chunk) {
		OpenAiChatChunk.Choice choice = firstChoice(chunk.choices());
		OpenAiChatChunk.Delta delta = (choice != null) ? choice.delta() : null;
		String content = (delta != null && delta.content() != null) ? delta.content() : "";
		OpenAiChatCompletion.Usage usage = chunk.usage();
		return new CompletionDelta(content, toolCalls(delta), (choice != null) ? choice.finishReason() : null,
				(usage != null) ? this.usage.read(usage.promptTokens(), usage.completionTokens()) : null,
				this.providerText.model(chunk.model()));
	}

	// With n > 1 the choices' chunks interleave; like chat, the answer is the first choice's.
	private static OpenAiChatChunk.@Nullable Choice firstChoice(@Nullable List<OpenAiChatChunk.Choice> choices) {
		if (choices == null) {
			return null;
		}
		for (OpenAiChatChunk.Choice choice : choices) {
			if (choice.index() == null || choice.index() == 0) {
				return choice;
			}
		}
		return null;
	}

	private static List<ToolCallDelta> toolCalls(OpenAiChatChunk.@Nullable Delta delta) {
		if (delta == null || delta.toolCalls() == null) {
			return List.of();
		}
		List<ToolCallDelta> calls = new ArrayList<>();
		for (OpenAiChatChunk.ToolCall call : delta.toolCalls()) {
			OpenAiChatCompletion.Function function = call.function();
			calls.add(new ToolCallDelta((call.index() != null) ? call.index() : 0, call.id(),
					(function != null) ? function.name() : null,
					(function != null && function.arguments() != null) ? function.arguments() : ""));
		}
		return calls;
	}

}
