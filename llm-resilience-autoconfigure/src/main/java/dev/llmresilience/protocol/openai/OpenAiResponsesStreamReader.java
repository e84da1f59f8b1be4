package dev.llmresilience.protocol.openai;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.ProviderText;
import dev.llmresilience.protocol.ReportedUsage;
import dev.llmresilience.protocol.StreamLimits.StreamEnd;
import dev.llmresilience.protocol.UpstreamFailures;
import dev.llmresilience.protocol.WireJson;
import dev.llmresilience.protocol.openai.OpenAiResponsesWire.Event;
import dev.llmresilience.protocol.openai.OpenAiResponsesWire.OutputItem;
import dev.llmresilience.protocol.openai.OpenAiResponsesWire.Response;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.SynchronousSink;

import org.springframework.http.HttpHeaders;
import org.springframework.http.codec.ServerSentEvent;

/**
 * Turns the server-sent events of one streamed Responses API answer into {@link CompletionDelta}s,
 * by each event's {@code type} (the JSON's, else the SSE {@code event:} name):
 * {@code response.output_text.delta} is text; a {@code function_call} item
 * ({@code response.output_item.added}) and its {@code response.function_call_arguments.delta}s are
 * tool-call pieces, numbered among the tool calls from 0 as chat completions number them (a call
 * whose arguments came only whole, in {@code .done} or {@code response.output_item.done}, is sent
 * then); {@code response.completed} and {@code response.incomplete} bring the finish reason and the
 * usage and end the stream normally; {@code response.failed} and an {@code error} event are the
 * failure their code stands for ({@link OpenAiResponsesErrors}). Every other event
 * ({@code response.content_part.added}, {@code response.refusal.delta}, reasoning, a trailing
 * {@code [DONE]}) adds nothing. A body that ends before one of the three lifecycle ends is a
 * broken stream.
 */
final class OpenAiResponsesStreamReader {

	private static final String END = "response.completed";

	private static final String DONE = "[DONE]";

	private final String endpoint;

	private final UpstreamFailures failures;

	private final OpenAiResponsesErrors errors;

	private final ReportedUsage usage;

	private final ProviderText providerText;

	OpenAiResponsesStreamReader(String endpoint, UpstreamFailures failures, OpenAiResponsesErrors errors,
			ReportedUsage usage, ProviderText providerText) {
		this.endpoint = endpoint;
		this.failures = failures;
		this.errors = errors;
		this.usage = usage;
		this.providerText = providerText;
	}

	/**
	 * Read a stream.
	 * @param events the decoded events of one response
	 * @return the deltas; completes when the body ends after {@code response.completed} or
	 * {@code response.incomplete}, and fails when it ends before either
	 */
	Flux<CompletionDelta> read(Flux<ServerSentEvent<String>> events) {
		return Flux.defer(() -> {
			Answer answer = new Answer();
			return answer.end.bounded(events.<CompletionDelta>handle((event, sink) -> decode(event, sink, answer)))
				.concatWith(Mono.defer(() -> answer.end.isReached() ? Mono.empty()
						: Mono.error(this.failures.truncatedStream(this.endpoint, END))));
		});
	}

	private void decode(ServerSentEvent<String> sse, SynchronousSink<CompletionDelta> sink, Answer answer) {
		if (answer.end.isReached()) {
			// read on to the body's end, so the connection goes back to the pool (StreamEnd)
			return;
		}
		String data = sse.data();
		boolean errorEvent = "error".equals(sse.event());
		if ((data == null || data.isBlank() || DONE.equals(data.strip())) && !errorEvent) {
			return;
		}
		Event event = WireJson.readOrNull(data, Event.class);
		if (event == null) {
			sink.error(errorEvent ? this.errors.classify(null, HttpHeaders.EMPTY)
					: WireJson.malformed(this.endpoint, "A stream event is not valid JSON"));
			return;
		}
		String type = (event.type() != null) ? event.type() : sse.event();
		switch ((type != null) ? type : "") {
			case "response.created", "response.in_progress", "response.queued" -> started(event, sink, answer);
			case "response.output_text.delta" -> text(event, sink, answer);
			case "response.output_item.added" -> itemAdded(event, sink, answer);
			case "response.function_call_arguments.delta" -> argumentsDelta(event, sink, answer);
			case "response.function_call_arguments.done" -> argumentsDone(event, sink, answer);
			case "response.output_item.done" -> itemDone(event, sink, answer);
			case END, "response.incomplete" -> finished(event, sink, answer);
			case "response.failed" -> sink.error(this.errors
				.classify((event.response() != null) ? event.response().error() : null, HttpHeaders.EMPTY));
			case "error" -> sink.error(this.errors.classify((event.error() != null) ? event.error()
					: new OpenAiChatCompletion.Error(event.message(), null, event.code()), HttpHeaders.EMPTY));
			default -> {
				// content parts, refusals, reasoning, built-in tools, and event types added after this was written
			}
		}
	}

	private void started(Event event, SynchronousSink<CompletionDelta> sink, Answer answer) {
		String model = (event.response() != null) ? this.providerText.model(event.response().model()) : null;
		if (model != null && !model.equals(answer.model)) {
			answer.model = model;
			sink.next(new CompletionDelta("", List.of(), null, null, model));
		}
	}

	private static void text(Event event, SynchronousSink<CompletionDelta> sink, Answer answer) {
		if (event.delta() != null && !event.delta().isEmpty()) {
			sink.next(new CompletionDelta(event.delta(), List.of(), null, null, answer.model));
		}
	}

	private static void itemAdded(Event event, SynchronousSink<CompletionDelta> sink, Answer answer) {
		OutputItem item = event.item();
		if (item == null || !item.isFunctionCall()) {
			return;
		}
		int call = answer.call(key(item.id(), event.outputIndex()));
		String arguments = (item.arguments() != null) ? item.arguments() : "";
		if (!arguments.isEmpty()) {
			answer.withArguments.add(call);
		}
		answer.named.add(call);
		sink.next(answer.piece(new ToolCallDelta(call, item.callId(), item.name(), arguments)));
	}

	private static void argumentsDelta(Event event, SynchronousSink<CompletionDelta> sink, Answer answer) {
		if (event.delta() == null || event.delta().isEmpty()) {
			return;
		}
		int call = answer.call(key(event.itemId(), event.outputIndex()));
		answer.withArguments.add(call);
		sink.next(answer.piece(new ToolCallDelta(call, null, null, event.delta())));
	}

	private static void argumentsDone(Event event, SynchronousSink<CompletionDelta> sink, Answer answer) {
		int call = answer.call(key(event.itemId(), event.outputIndex()));
		if (!answer.withArguments.contains(call) && event.arguments() != null && !event.arguments().isEmpty()) {
			answer.withArguments.add(call);
			sink.next(answer.piece(new ToolCallDelta(call, null, null, event.arguments())));
		}
	}

	// What the item's earlier events left out: its id and name, its arguments.
	private static void itemDone(Event event, SynchronousSink<CompletionDelta> sink, Answer answer) {
		OutputItem item = event.item();
		if (item == null || !item.isFunctionCall()) {
			return;
		}
		int call = answer.call(key(item.id(), event.outputIndex()));
		boolean named = answer.named.add(call);
		String arguments = (!answer.withArguments.contains(call) && item.arguments() != null) ? item.arguments() : "";
		answer.withArguments.add(call);
		if (named || !arguments.isEmpty()) {
			sink.next(answer.piece(new ToolCallDelta(call, named ? item.callId() : null, named ? item.name() : null,
					arguments)));
		}
	}

	private void finished(Event event, SynchronousSink<CompletionDelta> sink, Answer answer) {
		Response response = (event.response() != null) ? event.response()
				: new Response(null, null, null, null, null, null);
		String model = (response.model() != null) ? this.providerText.model(response.model()) : answer.model;
		OpenAiResponsesWire.Usage counts = response.usage();
		Usage usage = (counts != null) ? this.usage.read(counts.inputTokens(), counts.outputTokens()) : null;
		String status = ("response.incomplete".equals(event.type()) && response.status() == null)
				? OpenAiResponsesWire.INCOMPLETE : response.status();
		String finishReason = new Response(null, status, null, null, response.incompleteDetails(), null)
			.finishReason(answer.anyCall());
		answer.end.reached();
		sink.next(new CompletionDelta("", List.of(), finishReason, usage, model));
	}

	// An item is known by its id; a server that leaves the id out, by its place in the output.
	private static String key(@Nullable String itemId, @Nullable Integer outputIndex) {
		return (itemId != null) ? itemId : "#" + outputIndex;
	}

	/** What one stream has said so far. */
	private static final class Answer {

		private @Nullable String model;

		/** A function call item's id to the call's number among the tool calls. */
		private final Map<String, Integer> calls = new HashMap<>();

		/** The calls whose id and name, and whose arguments, have been sent. */
		private final Set<Integer> named = new HashSet<>();

		private final Set<Integer> withArguments = new HashSet<>();

		private final StreamEnd end = new StreamEnd();

		int call(String item) {
			return this.calls.computeIfAbsent(item, (key) -> this.calls.size());
		}

		boolean anyCall() {
			return !this.calls.isEmpty();
		}

		CompletionDelta piece(ToolCallDelta call) {
			return new CompletionDelta("", List.of(call), null, null, this.model);
		}

	}

}
