package dev.llmresilience.protocol.anthropic;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
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
 * Turns the server-sent events of one streamed Messages API answer into {@link CompletionDelta}s.
 * The protocol's {@code StreamLimits} have dealt with the framing; this reads each event's JSON and follows the
 * message: text deltas become content, a {@code tool_use} block and its {@code input_json_delta}s
 * become tool-call pieces (numbered among the tool calls only, as OpenAI numbers them),
 * {@code message_delta} brings the finish reason and the usage, {@code message_stop} ends the
 * stream, {@code ping} and unknown events are skipped, and an {@code error} event is the failure it
 * stands for.
 */
final class AnthropicStreamReader {

	private static final String END = "message_stop";

	private final String endpoint;

	private final UpstreamFailures failures;

	private final AnthropicErrors errors;

	private final ReportedUsage usage;

	private final ProviderText providerText;

	AnthropicStreamReader(String endpoint, UpstreamFailures failures, AnthropicErrors errors, ReportedUsage usage,
			ProviderText providerText) {
		this.endpoint = endpoint;
		this.failures = failures;
		this.errors = errors;
		this.usage = usage;
		this.providerText = providerText;
	}

	/**
	 * Read a stream.
	 * @param events the decoded events of one response
	 * @return the deltas; completes when the body ends after {@code message_stop}, and fails when it
	 * ends before it
	 */
	Flux<CompletionDelta> read(Flux<ServerSentEvent<String>> events) {
		return Flux.defer(() -> {
			Message message = new Message();
			return message.end.bounded(events.<CompletionDelta>handle((event, sink) -> decode(event, sink, message)))
				.concatWith(Mono.defer(() -> message.end.isReached() ? Mono.empty()
						: Mono.error(this.failures.truncatedStream(this.endpoint, END))));
		});
	}

	private void decode(ServerSentEvent<String> sse, SynchronousSink<CompletionDelta> sink, Message message) {
		if (message.end.isReached()) {
			// read on to the body's end, so the connection goes back to the pool (StreamEnd)
			return;
		}
		String data = sse.data();
		boolean errorEvent = "error".equals(sse.event());
		if ((data == null || data.isBlank()) && !errorEvent) {
			return;
		}
		AnthropicEvent event = WireJson.readOrNull(data, AnthropicEvent.class);
		if (event == null) {
			if (errorEvent) {
				sink.error(this.errors.classifyInBand(null));
			}
			else {
				sink.error(WireJson.malformed(this.endpoint, "A stream event is not valid JSON"));
			}
			return;
		}
		String type = (event.type() != null) ? event.type() : sse.event();
		switch ((type != null) ? type : "") {
			case "message_start" -> start(event, sink, message);
			case "content_block_start" -> blockStart(event, sink, message);
			case "content_block_delta" -> blockDelta(event, sink, message);
			case "message_delta" -> messageDelta(event, sink, message);
			case END -> message.end.reached();
			case "error" -> sink.error(this.errors.classifyInBand(event.error()));
			default -> {
				// ping, content_block_stop, and event types added after this was written
			}
		}
	}

	private void start(AnthropicEvent event, SynchronousSink<CompletionDelta> sink, Message message) {
		AnthropicMessage start = event.message();
		if (start != null) {
			message.model = this.providerText.model(start.model());
			message.usage = start.usage();
		}
		sink.next(new CompletionDelta("", List.of(), null, null, message.model));
	}

	private static void blockStart(AnthropicEvent event, SynchronousSink<CompletionDelta> sink, Message message) {
		AnthropicMessage.ContentBlock block = event.contentBlock();
		if (block == null || event.index() == null) {
			return;
		}
		if (block.isToolUse()) {
			int call = message.toolCalls.size();
			message.toolCalls.put(event.index(), call);
			// In a stream the arguments follow as input_json_delta; the block's own input is {} then.
			String arguments = (block.input() != null && !block.input().isEmpty()) ? block.input().toString() : "";
			sink.next(delta(message, "", List.of(new ToolCallDelta(call, block.id(), block.name(), arguments))));
		}
		else if (block.isText() && block.text() != null && !block.text().isEmpty()) {
			sink.next(delta(message, block.text(), List.of()));
		}
	}

	private static void blockDelta(AnthropicEvent event, SynchronousSink<CompletionDelta> sink, Message message) {
		AnthropicEvent.Delta delta = event.delta();
		if (delta == null) {
			return;
		}
		if ("text_delta".equals(delta.type()) && delta.text() != null && !delta.text().isEmpty()) {
			sink.next(delta(message, delta.text(), List.of()));
		}
		Integer call = (event.index() != null) ? message.toolCalls.get(event.index()) : null;
		if ("input_json_delta".equals(delta.type()) && call != null && delta.partialJson() != null
				&& !delta.partialJson().isEmpty()) {
			sink.next(delta(message, "", List.of(new ToolCallDelta(call, null, null, delta.partialJson()))));
		}
	}

	// The counts of message_delta are the message's totals so far; its input counts, where present,
	// are the same as message_start's.
	private void messageDelta(AnthropicEvent event, SynchronousSink<CompletionDelta> sink, Message message) {
		AnthropicMessage.Usage counts = (event.usage() != null) ? event.usage() : message.usage;
		Long prompt = (counts != null && counts.promptTokens() != null) ? counts.promptTokens()
				: (message.usage != null) ? message.usage.promptTokens() : null;
		Long completion = (counts != null) ? counts.outputTokens() : null;
		Usage usage = this.usage.read(prompt, completion);
		String stopReason = (event.delta() != null) ? event.delta().stopReason() : null;
		sink.next(new CompletionDelta("", List.of(), AnthropicMessage.finishReason(stopReason), usage, message.model));
	}

	private static CompletionDelta delta(Message message, String text, List<ToolCallDelta> calls) {
		return new CompletionDelta(text, calls, null, null, message.model);
	}

	/** What one stream has said so far. */
	private static final class Message {

		private @Nullable String model;

		private AnthropicMessage.@Nullable Usage usage;

		/** Content block index to the tool call's number among the tool calls. */
		private final Map<Integer, Integer> toolCalls = new HashMap<>();

		private final StreamEnd end = new StreamEnd();

	}

}
