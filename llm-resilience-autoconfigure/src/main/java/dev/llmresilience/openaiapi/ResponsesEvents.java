package dev.llmresilience.openaiapi;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ToolCallDelta;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

import org.springframework.http.codec.ServerSentEvent;

/**
 * One streamed answer as the Responses API's events: {@code response.created} and
 * {@code response.in_progress}, then for the text a message item ({@code output_item.added},
 * {@code content_part.added}, {@code output_text.delta}..., {@code output_text.done},
 * {@code content_part.done}, {@code output_item.done}) and for each tool call a function call item
 * (with {@code function_call_arguments.delta} and {@code .done}), then {@code response.completed},
 * or {@code response.incomplete} after a length cut or a content filter. A stream that fails after
 * it started ends with an {@code error} event and {@code response.failed}, never a silent close.
 * Each event is named by its {@code type} and numbered from 0. One instance serves one stream; its
 * chunks come one at a time, so its state needs no locks.
 */
final class ResponsesEvents {

	private final ResponsesCodec codec;

	private final ResponsesCodec.Head head;

	private final Supplier<String> ids;

	private final List<Item> items = new ArrayList<>();

	private final Map<Integer, Item> calls = new LinkedHashMap<>();

	private @Nullable Item message;

	private int sequence;

	private @Nullable String finishReason;

	private dev.llmresilience.chat.@Nullable Usage usage;

	/**
	 * Create the translator of one stream.
	 * @param codec writes the events' data
	 * @param head the response's id, time, model and request
	 * @param ids new random hex ids, for the items
	 */
	ResponsesEvents(ResponsesCodec codec, ResponsesCodec.Head head, Supplier<String> ids) {
		this.codec = codec;
		this.head = head;
		this.ids = ids;
	}

	/**
	 * The events of a stream.
	 * @param chunks the gateway's chunks, the first one included
	 * @param failure the message of the event that ends a stream that failed after it started
	 * @return the events
	 */
	Flux<ServerSentEvent<String>> events(Flux<ChatChunk> chunks, Function<Throwable, String> failure) {
		Flux<ServerSentEvent<String>> start = Flux.defer(() -> Flux.just(
				responseEvent("response.created", ResponsesCodec.IN_PROGRESS, null),
				responseEvent("response.in_progress", ResponsesCodec.IN_PROGRESS, null)));
		return start.concatWith(chunks.concatMapIterable(this::chunk))
			.concatWith(Flux.defer(() -> Flux.fromIterable(end())))
			.onErrorResume((error) -> Flux.fromIterable(failed(failure.apply(error))));
	}

	private List<ServerSentEvent<String>> chunk(ChatChunk chunk) {
		List<ServerSentEvent<String>> events = new ArrayList<>();
		if (chunk.usage() != null) {
			this.usage = chunk.usage();
		}
		if (chunk.finishReason() != null) {
			this.finishReason = chunk.finishReason();
		}
		if (!chunk.content().isEmpty()) {
			Item open = (this.message != null) ? this.message : openMessage(events);
			open.text.append(chunk.content());
			events.add(event("response.output_text.delta", fields("item_id", open.id, "output_index", open.index,
					"content_index", 0, "delta", chunk.content(), "logprobs", List.of())));
		}
		for (ToolCallDelta delta : chunk.toolCalls()) {
			Item call = this.calls.get(delta.index());
			if (call == null) {
				closeMessage(events);
				call = new Item(false, "fc_" + this.ids.get(), this.items.size());
				call.callId = (delta.id() != null) ? delta.id() : "call_" + this.ids.get();
				call.name = (delta.name() != null) ? delta.name() : "";
				this.items.add(call);
				this.calls.put(delta.index(), call);
				events.add(event("response.output_item.added", fields("output_index", call.index, "item",
						this.codec.functionCall(call.id, call.callId, call.name, "", ResponsesCodec.IN_PROGRESS))));
			}
			if (!delta.arguments().isEmpty()) {
				call.text.append(delta.arguments());
				events.add(event("response.function_call_arguments.delta",
						fields("item_id", call.id, "output_index", call.index, "delta", delta.arguments())));
			}
		}
		return events;
	}

	private Item openMessage(List<ServerSentEvent<String>> events) {
		Item open = new Item(true, "msg_" + this.ids.get(), this.items.size());
		this.items.add(open);
		this.message = open;
		events.add(event("response.output_item.added", fields("output_index", open.index, "item",
				this.codec.message(open.id, ResponsesCodec.IN_PROGRESS, null))));
		events.add(event("response.content_part.added", fields("item_id", open.id, "output_index", open.index,
				"content_index", 0, "part", this.codec.outputText(""))));
		return open;
	}

	private void closeMessage(List<ServerSentEvent<String>> events) {
		Item open = this.message;
		if (open == null) {
			return;
		}
		this.message = null;
		open.done = true;
		String text = open.text.toString();
		events.add(event("response.output_text.done", fields("item_id", open.id, "output_index", open.index,
				"content_index", 0, "text", text, "logprobs", List.of())));
		events.add(event("response.content_part.done", fields("item_id", open.id, "output_index", open.index,
				"content_index", 0, "part", this.codec.outputText(text))));
		events.add(event("response.output_item.done", fields("output_index", open.index, "item", itemBody(open,
				ResponsesCodec.itemStatus(ResponsesCodec.status(this.finishReason))))));
	}

	private List<ServerSentEvent<String>> end() {
		List<ServerSentEvent<String>> events = new ArrayList<>();
		if (this.items.isEmpty()) {
			// an empty answer is still a message, as OpenAI's is
			openMessage(events);
		}
		closeMessage(events);
		String status = ResponsesCodec.status(this.finishReason);
		for (Item call : this.calls.values()) {
			if (!call.done) {
				call.done = true;
				events.add(event("response.function_call_arguments.done", fields("item_id", call.id, "output_index",
						call.index, "name", call.name, "arguments", call.text.toString())));
				events.add(event("response.output_item.done",
						fields("output_index", call.index, "item", itemBody(call, ResponsesCodec.COMPLETED))));
			}
		}
		String type = ResponsesCodec.INCOMPLETE.equals(status) ? "response.incomplete" : "response.completed";
		events.add(responseEvent(type, status, null));
		return events;
	}

	private List<ServerSentEvent<String>> failed(String message) {
		List<ServerSentEvent<String>> events = new ArrayList<>();
		Map<String, @Nullable Object> error = new LinkedHashMap<>();
		error.put("code", "stream_interrupted");
		error.put("message", message);
		error.put("param", null);
		events.add(event("error", error));
		events.add(responseEvent("response.failed", ResponsesCodec.FAILED,
				new ResponsesBodies.Error("server_error", message)));
		return events;
	}

	private ServerSentEvent<String> responseEvent(String type, String status, ResponsesBodies.@Nullable Error error) {
		List<Object> output = new ArrayList<>();
		boolean over = !ResponsesCodec.IN_PROGRESS.equals(status);
		for (Item item : this.items) {
			String itemStatus = item.done ? (item.message ? ResponsesCodec.itemStatus(status) : ResponsesCodec.COMPLETED)
					: (over ? ResponsesCodec.INCOMPLETE : ResponsesCodec.IN_PROGRESS);
			output.add(itemBody(item, itemStatus));
		}
		boolean ended = ResponsesCodec.COMPLETED.equals(status) || ResponsesCodec.INCOMPLETE.equals(status);
		ResponsesBodies.Response response = this.codec.body(this.head, status,
				ended ? ResponsesCodec.incomplete(this.finishReason) : null, error, output,
				ended ? ResponsesCodec.usage(this.usage) : null);
		return event(type, fields("response", response));
	}

	private Object itemBody(Item item, String status) {
		return item.message ? this.codec.message(item.id, status, item.text.toString())
				: this.codec.functionCall(item.id, item.callId, item.name, item.text.toString(), status);
	}

	private ServerSentEvent<String> event(String type, Map<String, ? extends @Nullable Object> fields) {
		String data = this.codec.event(type, this.sequence++, new LinkedHashMap<>(fields));
		return ServerSentEvent.builder(data).event(type).build();
	}

	private static Map<String, Object> fields(Object... namesAndValues) {
		Map<String, Object> fields = new LinkedHashMap<>();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			fields.put((String) namesAndValues[i], namesAndValues[i + 1]);
		}
		return fields;
	}

	/** An output item being streamed: a message's text, or a function call's arguments. */
	private static final class Item {

		final boolean message;

		final String id;

		final int index;

		final StringBuilder text = new StringBuilder();

		String callId = "";

		String name = "";

		boolean done;

		Item(boolean message, String id, int index) {
			this.message = message;
			this.id = id;
			this.index = index;
		}

	}

}
