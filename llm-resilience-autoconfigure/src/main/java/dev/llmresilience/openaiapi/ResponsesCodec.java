package dev.llmresilience.openaiapi;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tool;
import dev.llmresilience.chat.ToolCall;
import dev.llmresilience.chat.ToolChoice;
import dev.llmresilience.chat.Usage;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * OpenAI's Responses API format on the serving side: reads what a client sends to
 * {@code POST /responses} strictly, and writes {@code response} objects, their output items and the
 * data of stream events from the project's own types, as the official SDKs read them.
 */
final class ResponsesCodec {

	static final String COMPLETED = "completed";

	static final String INCOMPLETE = "incomplete";

	static final String IN_PROGRESS = "in_progress";

	static final String FAILED = "failed";

	private final JsonMapper mapper = JsonMapper.builder()
		.disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
		.build();

	private final StrictRequestJson json = new StrictRequestJson();

	private final ResponsesRequestReader reader = new ResponsesRequestReader(this.mapper);

	/**
	 * Read a request body, strictly.
	 * @param body the body's bytes
	 * @param priorityHeader the request's {@code x-llm-priority} header, or {@code null} when absent
	 * @return the request
	 * @throws WireFormatException naming the field when the body is not a Responses request this API serves
	 */
	ResponsesRequest read(byte[] body, @Nullable String priorityHeader) {
		return this.reader.read(this.json.read(body), priorityHeader);
	}

	/**
	 * What a {@code response} object says of itself besides its output: the same on every event of
	 * a stream and on the object the stream ends with.
	 *
	 * @param id the response's id, {@code resp_...}
	 * @param createdAt its creation time, in seconds since the epoch
	 * @param model the model to name
	 * @param request the request it answers, whose settings it repeats
	 */
	record Head(String id, long createdAt, String model, ResponsesRequest request) {
	}

	/**
	 * The {@code response} object of a whole answer.
	 * @param head the response's id, time, model and request
	 * @param response the answer
	 * @param messageId the id of the message item, when the answer has text
	 * @param callIds the ids of the function call items, one per tool call
	 * @return the JSON body
	 */
	byte[] response(Head head, ChatResponse response, String messageId, List<String> callIds) {
		String status = status(response.finishReason());
		List<Object> output = new ArrayList<>();
		if (!response.content().isEmpty() || response.toolCalls().isEmpty()) {
			output.add(message(messageId, itemStatus(status), response.content()));
		}
		for (int i = 0; i < response.toolCalls().size(); i++) {
			ToolCall call = response.toolCalls().get(i);
			output.add(functionCall(callIds.get(i), call.id(), call.name(), call.arguments(), COMPLETED));
		}
		return this.mapper.writeValueAsBytes(body(head, status, incomplete(response.finishReason()), null, output,
				usage(response.usage())));
	}

	/**
	 * A {@code response} object.
	 * @param head the response's id, time, model and request
	 * @param status {@code in_progress}, {@code completed}, {@code incomplete} or {@code failed}
	 * @param incomplete why it is incomplete, or {@code null}
	 * @param error what failed, or {@code null}
	 * @param output its output items
	 * @param usage its token counts, or {@code null} when unknown
	 * @return the object, to be written or put in an event
	 */
	ResponsesBodies.Response body(Head head, String status, ResponsesBodies.@Nullable IncompleteDetails incomplete,
			ResponsesBodies.@Nullable Error error, List<Object> output, ResponsesBodies.@Nullable Usage usage) {
		ResponsesRequest request = head.request();
		// the gateway stores nothing and truncates nothing: what store and truncation say of every answer
		ResponsesBodies.Settings settings = new ResponsesBodies.Settings(request.instructions(),
				request.request().maxTokens(), request.parallelToolCalls(), request.request().temperature(),
				toolChoice(request.request().toolChoice()), tools(request.request().tools()), request.topP(),
				request.metadata(), false, "disabled");
		return new ResponsesBodies.Response(head.id(), "response", head.createdAt(), status, error, incomplete,
				head.model(), List.copyOf(output), settings, usage);
	}

	ResponsesBodies.Message message(String id, String status, @Nullable String text) {
		List<ResponsesBodies.OutputText> content = (text != null) ? List.of(outputText(text)) : List.of();
		return new ResponsesBodies.Message("message", id, status, "assistant", content);
	}

	ResponsesBodies.OutputText outputText(String text) {
		return new ResponsesBodies.OutputText("output_text", text, List.of(), List.of());
	}

	ResponsesBodies.FunctionCall functionCall(String id, String callId, String name, String arguments, String status) {
		return new ResponsesBodies.FunctionCall("function_call", id, callId, name, arguments, status);
	}

	/**
	 * The data of one stream event: its {@code type}, its fields, then its {@code sequence_number}.
	 * @param type the event's type, which is also its SSE event name
	 * @param sequence its sequence number
	 * @param fields its other fields, in order
	 * @return the JSON text
	 */
	String event(String type, int sequence, Map<String, @Nullable Object> fields) {
		Map<String, @Nullable Object> event = new LinkedHashMap<>();
		event.put("type", type);
		event.putAll(fields);
		event.put("sequence_number", sequence);
		return this.mapper.writeValueAsString(event);
	}

	/** A length cut is {@code incomplete} (max_output_tokens), as a content filter's cut is; the rest completed. */
	static String status(@Nullable String finishReason) {
		return (incomplete(finishReason) != null) ? INCOMPLETE : COMPLETED;
	}

	static String itemStatus(String responseStatus) {
		return INCOMPLETE.equals(responseStatus) ? INCOMPLETE : COMPLETED;
	}

	static ResponsesBodies.@Nullable IncompleteDetails incomplete(@Nullable String finishReason) {
		if ("length".equals(finishReason)) {
			return new ResponsesBodies.IncompleteDetails("max_output_tokens");
		}
		if (ChatResponse.CONTENT_FILTER.equals(finishReason)) {
			return new ResponsesBodies.IncompleteDetails(ChatResponse.CONTENT_FILTER);
		}
		return null;
	}

	/** The counts the provider reported; a count it left out is 0, as chat completions writes it. */
	static ResponsesBodies.@Nullable Usage usage(@Nullable Usage usage) {
		if (usage == null) {
			return null;
		}
		int input = (usage.promptTokens() != null) ? usage.promptTokens() : 0;
		int output = (usage.completionTokens() != null) ? usage.completionTokens() : 0;
		return new ResponsesBodies.Usage(input, new ResponsesBodies.InputDetails(0), output,
				new ResponsesBodies.OutputDetails(0), input + output);
	}

	private static Object toolChoice(@Nullable ToolChoice choice) {
		if (choice == null) {
			return "auto";
		}
		return switch (choice.mode()) {
			case AUTO -> "auto";
			case NONE -> "none";
			case REQUIRED -> "required";
			case FUNCTION -> new ResponsesBodies.FunctionChoice("function", String.valueOf(choice.function()));
		};
	}

	private List<ResponsesBodies.FunctionTool> tools(List<Tool> tools) {
		return tools.stream()
			.map((tool) -> new ResponsesBodies.FunctionTool("function", tool.name(), tool.description(),
					(tool.parameters() != null) ? this.mapper.readTree(tool.parameters()) : null, tool.strict()))
			.toList();
	}

}
