package dev.llmresilience.openaiapi;

import java.util.ArrayList;
import java.util.List;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolCallDelta;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.protocol.Completion;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The OpenAI chat-completions format on the serving side: reads what a client sends, and writes
 * {@code chat.completion} bodies, {@code chat.completion.chunk} events and error bodies from the
 * project's own types. Its records are its own, shaped field for field like those the OpenAI client
 * reads, so that what this writes that client reads back unchanged (the round-trip tests hold it).
 */
final class OpenAiApiCodec {

	private static final String ASSISTANT = "assistant";

	private final JsonMapper mapper = JsonMapper.builder()
		.disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
		.build();

	private final StrictRequestJson json = new StrictRequestJson();

	private final OpenAiRequestReader reader = new OpenAiRequestReader(this.mapper);

	/**
	 * Read a request body, strictly: a body that cannot be read as exactly what the client sent
	 * (duplicate keys, numbers out of range, a known field of the wrong type) is refused.
	 * @param body the body's bytes
	 * @return the request
	 * @throws WireFormatException naming the field when the body is not a chat-completions
	 * request this API serves
	 */
	public OpenAiApiRequest read(byte[] body) {
		return read(body, null);
	}

	/**
	 * Read a request body and its priority, strictly, as {@link #read(byte[])}.
	 * @param body the body's bytes
	 * @param priorityHeader the request's {@code x-llm-priority} header, or {@code null} when absent
	 * @return the request
	 * @throws WireFormatException naming the field (or the header) when the body is not a
	 * chat-completions request this API serves, or the priority is not {@code interactive} or
	 * {@code batch}, or the header and {@code metadata.priority} disagree
	 */
	public OpenAiApiRequest read(byte[] body, @Nullable String priorityHeader) {
		return this.reader.read(this.json.read(body), priorityHeader);
	}

	/**
	 * A {@code chat.completion} body.
	 * @param id the completion's id
	 * @param created its creation time, in seconds since the epoch
	 * @param model the model to name
	 * @param response the answer
	 * @return the JSON body
	 */
	public byte[] completion(String id, long created, String model, ChatResponse response) {
		List<OpenAiApiBodies.ToolCall> calls = response.toolCalls().stream().map(OpenAiApiCodec::toolCall).toList();
		String content = (response.content().isEmpty() && !calls.isEmpty()) ? null : response.content();
		OpenAiApiBodies.Choice choice = new OpenAiApiBodies.Choice(0,
				new OpenAiApiBodies.Message(ASSISTANT, content, null, calls), null,
				finishReason(response.finishReason(), !calls.isEmpty()));
		return this.mapper.writeValueAsBytes(new OpenAiApiBodies.Completion(id, "chat.completion", created, model,
				List.of(choice), usage(response.usage())));
	}

	/**
	 * The data of one {@code chat.completion.chunk} event.
	 * @param id the completion's id, the same on every chunk
	 * @param created its creation time, in seconds since the epoch
	 * @param model the model to name
	 * @param chunk the chunk
	 * @param first whether it is the stream's first chunk, which names the role
	 * @return the JSON text
	 */
	public String chunk(String id, long created, String model, ChatChunk chunk, boolean first) {
		List<OpenAiApiBodies.DeltaToolCall> calls = null;
		if (!chunk.toolCalls().isEmpty()) {
			calls = new ArrayList<>();
			for (ToolCallDelta call : chunk.toolCalls()) {
				calls.add(new OpenAiApiBodies.DeltaToolCall(call.index(), call.id(), (call.id() != null) ? "function" : null,
						new OpenAiApiBodies.DeltaFunction(call.name(), call.arguments())));
			}
		}
		String content = (chunk.content().isEmpty() && !first) ? null : chunk.content();
		OpenAiApiBodies.Delta delta = new OpenAiApiBodies.Delta(first ? ASSISTANT : null, content, calls);
		return this.mapper.writeValueAsString(new OpenAiApiBodies.Chunk(id, "chat.completion.chunk", created, model,
				List.of(new OpenAiApiBodies.ChunkChoice(0, delta, null, chunk.finishReason())), null));
	}

	/**
	 * The data of the last event of a stream that asked for {@code include_usage}: no choices, the
	 * token counts.
	 * @param id the completion's id
	 * @param created its creation time, in seconds since the epoch
	 * @param model the model to name
	 * @param usage the counts, or {@code null} when the provider reported none: then {@code usage} is
	 * left out, as in a whole answer (zeros would read as a free call)
	 * @return the JSON text
	 */
	public String usageChunk(String id, long created, String model, @Nullable Usage usage) {
		return this.mapper.writeValueAsString(new OpenAiApiBodies.Chunk(id, "chat.completion.chunk", created, model,
				List.of(), usage(usage)));
	}

	/**
	 * A {@code GET /models} body.
	 * @param ids the models' ids
	 * @param ownedBy the owner to name
	 * @return the JSON body
	 */
	public byte[] models(List<String> ids, String ownedBy) {
		return this.mapper.writeValueAsBytes(new OpenAiApiBodies.ModelList("list",
				ids.stream().map((id) -> new OpenAiApiBodies.Model(id, "model", 0, ownedBy)).toList()));
	}

	/**
	 * An error body, {@code {"error": {"message", "type", "param", "code"}}}: the body of an error
	 * response, and the data of the event that ends a stream that failed after it started.
	 * @param message what happened, for the client's user
	 * @param type the error's type, e.g. {@code invalid_request_error}
	 * @param param the offending request field, or {@code null}
	 * @param code the error's code, e.g. {@code model_not_found}, or {@code null}
	 * @return the JSON text
	 */
	public String error(String message, String type, @Nullable String param, @Nullable String code) {
		return this.mapper.writeValueAsString(
				new OpenAiApiBodies.ErrorBody(new OpenAiApiBodies.Error(message, type, param, code)));
	}

	// The SDKs require a finish reason on every choice of a completion.
	private static OpenAiApiBodies.ToolCall toolCall(ToolCall call) {
		return new OpenAiApiBodies.ToolCall(call.id(), "function",
				new OpenAiApiBodies.Function(call.name(), call.arguments()));
	}

	private static String finishReason(@Nullable String reason, boolean toolCalls) {
		if (reason != null) {
			return reason;
		}
		return toolCalls ? "tool_calls" : "stop";
	}

	private static OpenAiApiBodies.@Nullable Usage usage(@Nullable Usage usage) {
		if (usage == null) {
			return null;
		}
		int prompt = (usage.promptTokens() != null) ? usage.promptTokens() : 0;
		int completion = (usage.completionTokens() != null) ? usage.completionTokens() : 0;
		return new OpenAiApiBodies.Usage(prompt, completion, prompt + completion);
	}

}
