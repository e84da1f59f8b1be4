package dev.llmresilience.protocol.openai;

import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * The wire format of OpenAI's Responses API ({@code POST /responses}), only the fields this project
 * writes and reads: the request, the {@code response} object of an answer (also carried by the
 * stream's {@code response.completed}, {@code response.incomplete} and {@code response.failed}
 * events), and one server-sent event. Requests are {@code NON_NULL}; answers ignore unknown fields.
 */
final class OpenAiResponsesWire {

	static final String INCOMPLETE = "incomplete";

	static final String FAILED = "failed";

	private static final String MAX_OUTPUT_TOKENS = "max_output_tokens";

	private static final String LENGTH = "length";

	private static final String TOOL_CALLS = "tool_calls";

	private static final String STOP = "stop";

	private OpenAiResponsesWire() {
	}

	/**
	 * The body of {@code POST /responses}. {@code extra} is merged into the body as it is and may not
	 * repeat a field of this record ({@link OpenAiResponsesRequests#check}).
	 *
	 * @param model the model
	 * @param input the conversation, as input items
	 * @param temperature sampling temperature
	 * @param maxOutputTokens largest answer, reasoning tokens included
	 * @param stream whether to stream
	 * @param store always {@code false}: the gateway keeps nothing at the provider
	 * @param tools the functions the model may call
	 * @param toolChoice {@code "auto"}, {@code "none"}, {@code "required"} or a {@link NamedToolChoice}
	 * @param extra fields passed through
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record Request(@JsonProperty("model") String model, @JsonProperty("input") List<InputItem> input,
			@JsonProperty("temperature") @Nullable Double temperature,
			@JsonProperty("max_output_tokens") @Nullable Integer maxOutputTokens,
			@JsonProperty("stream") @Nullable Boolean stream, @JsonProperty("store") boolean store,
			@JsonProperty("tools") @Nullable List<Tool> tools, @JsonProperty("tool_choice") @Nullable Object toolChoice,
			@JsonAnyGetter Map<String, Object> extra) {
	}

	/**
	 * One input item: a {@code message} (role and content), a {@code function_call} the model made
	 * earlier, or the {@code function_call_output} that answers it.
	 *
	 * @param type the item's type
	 * @param role a message's role
	 * @param content a message's text, or its {@link Part}s
	 * @param callId a function call's id, on the call and on its output
	 * @param name a function call's function
	 * @param arguments a function call's arguments
	 * @param output a function call's result
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record InputItem(@JsonProperty("type") String type, @JsonProperty("role") @Nullable String role,
			@JsonProperty("content") @Nullable Object content, @JsonProperty("call_id") @Nullable String callId,
			@JsonProperty("name") @Nullable String name, @JsonProperty("arguments") @Nullable String arguments,
			@JsonProperty("output") @Nullable String output) {

		static InputItem message(String role, Object content) {
			return new InputItem("message", role, content, null, null, null, null);
		}

		static InputItem functionCall(String callId, String name, String arguments) {
			return new InputItem("function_call", null, null, callId, name, arguments, null);
		}

		static InputItem functionCallOutput(String callId, String output) {
			return new InputItem("function_call_output", null, null, callId, null, null, output);
		}

	}

	/**
	 * A content part of an input message: {@code input_text} or {@code input_image}.
	 *
	 * @param type the part's type
	 * @param text the text of a text part
	 * @param imageUrl the URL (or {@code data:} URL) of an image part
	 * @param detail the detail asked for an image
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record Part(@JsonProperty("type") String type, @JsonProperty("text") @Nullable String text,
			@JsonProperty("image_url") @Nullable String imageUrl, @JsonProperty("detail") @Nullable String detail) {
	}

	/**
	 * A function tool, flat (the Responses API has no nested {@code function}).
	 *
	 * @param type always {@code function}
	 * @param name its name
	 * @param description what it does
	 * @param parameters the JSON Schema of its arguments
	 * @param strict whether the schema is enforced
	 */
	@JsonInclude(JsonInclude.Include.NON_NULL)
	record Tool(@JsonProperty("type") String type, @JsonProperty("name") String name,
			@JsonProperty("description") @Nullable String description, @JsonProperty("parameters") JsonNode parameters,
			@JsonProperty("strict") boolean strict) {
	}

	/**
	 * A tool choice that names a function.
	 *
	 * @param type always {@code function}
	 * @param name the function
	 */
	record NamedToolChoice(@JsonProperty("type") String type, @JsonProperty("name") String name) {
	}

	/**
	 * A {@code response} object, or an error body ({@code error} alone).
	 *
	 * @param model the model that answered
	 * @param status {@code completed}, {@code incomplete}, {@code failed}, {@code in_progress}, ...
	 * @param output the output items; absent on an error body
	 * @param usage token counts
	 * @param incompleteDetails why an incomplete answer stopped
	 * @param error what failed, on a failed response or an error body
	 */
	@JsonIgnoreProperties(ignoreUnknown = true)
	record Response(@JsonProperty("model") @Nullable String model, @JsonProperty("status") @Nullable String status,
			@JsonProperty("output") @Nullable List<OutputItem> output, @JsonProperty("usage") @Nullable Usage usage,
			@JsonProperty("incomplete_details") @Nullable IncompleteDetails incompleteDetails,
			@JsonProperty("error") OpenAiChatCompletion.@Nullable Error error) {

		/**
		 * Why the model stopped, in the words every protocol's answers use: an incomplete answer
		 * cut at {@code max_output_tokens} is {@code length}, one the content filter stopped is
		 * {@code content_filter}; a whole one is {@code tool_calls} or {@code stop}.
		 * @param calledTools whether the answer calls functions
		 * @return the finish reason
		 */
		String finishReason(boolean calledTools) {
			if (INCOMPLETE.equals(this.status)) {
				String reason = (this.incompleteDetails != null) ? this.incompleteDetails.reason() : null;
				// the API's reference also shows max_tokens
				if (reason == null || MAX_OUTPUT_TOKENS.equals(reason) || "max_tokens".equals(reason)) {
					return LENGTH;
				}
				return reason;
			}
			return calledTools ? TOOL_CALLS : STOP;
		}

	}

	/**
	 * One output item: a {@code message}, a {@code function_call}, or another kind this project does
	 * not read ({@code reasoning}, built-in tool calls).
	 *
	 * @param type the item's type
	 * @param id the item's id
	 * @param callId a function call's id, which its output names
	 * @param name a function call's function
	 * @param arguments a function call's arguments
	 * @param content a message's parts
	 */
	@JsonIgnoreProperties(ignoreUnknown = true)
	record OutputItem(@JsonProperty("type") @Nullable String type, @JsonProperty("id") @Nullable String id,
			@JsonProperty("call_id") @Nullable String callId, @JsonProperty("name") @Nullable String name,
			@JsonProperty("arguments") @Nullable String arguments,
			@JsonProperty("content") @Nullable List<OutputContent> content) {

		boolean isMessage() {
			return "message".equals(this.type);
		}

		boolean isFunctionCall() {
			return "function_call".equals(this.type);
		}

	}

	/**
	 * A part of an output message: {@code output_text}, or a {@code refusal}.
	 *
	 * @param type the part's type
	 * @param text the text of an {@code output_text}
	 */
	@JsonIgnoreProperties(ignoreUnknown = true)
	record OutputContent(@JsonProperty("type") @Nullable String type, @JsonProperty("text") @Nullable String text) {
	}

	/**
	 * Token counts: {@code input_tokens} include the cached ones, {@code output_tokens} the reasoning
	 * ones, as chat completions' {@code prompt_tokens} and {@code completion_tokens} do. Long, so that
	 * an absurd count is checked ({@code ReportedUsage}) rather than failing the whole body.
	 *
	 * @param inputTokens the prompt's tokens
	 * @param outputTokens the answer's tokens
	 */
	@JsonIgnoreProperties(ignoreUnknown = true)
	record Usage(@JsonProperty("input_tokens") @Nullable Long inputTokens,
			@JsonProperty("output_tokens") @Nullable Long outputTokens) {
	}

	/**
	 * Why an answer is incomplete.
	 *
	 * @param reason {@code max_output_tokens} or {@code content_filter}
	 */
	@JsonIgnoreProperties(ignoreUnknown = true)
	record IncompleteDetails(@JsonProperty("reason") @Nullable String reason) {
	}

	/**
	 * The {@code data} of one server-sent event, whatever its {@code type}.
	 *
	 * @param type the event's type, e.g. {@code response.output_text.delta}
	 * @param delta a text or arguments delta
	 * @param itemId the output item a delta belongs to
	 * @param outputIndex the index of that item in the output
	 * @param item the item of {@code response.output_item.added} / {@code .done}
	 * @param arguments the whole arguments of {@code response.function_call_arguments.done}
	 * @param response the response of the lifecycle events
	 * @param code an {@code error} event's code
	 * @param message an {@code error} event's message
	 * @param error an error object, as some servers nest it
	 */
	@JsonIgnoreProperties(ignoreUnknown = true)
	record Event(@JsonProperty("type") @Nullable String type, @JsonProperty("delta") @Nullable String delta,
			@JsonProperty("item_id") @Nullable String itemId, @JsonProperty("output_index") @Nullable Integer outputIndex,
			@JsonProperty("item") @Nullable OutputItem item, @JsonProperty("arguments") @Nullable String arguments,
			@JsonProperty("response") @Nullable Response response, @JsonProperty("code") @Nullable Object code,
			@JsonProperty("message") @Nullable String message,
			@JsonProperty("error") OpenAiChatCompletion.@Nullable Error error) {
	}

}
