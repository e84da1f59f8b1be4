package dev.llmresilience.protocol.openai;

import java.lang.reflect.RecordComponent;
import java.util.Collections;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.failure.LlmInvalidRequestException;

/**
 * The body fields of a chat-completions request that a {@link ChatRequest}'s {@code extra} fields
 * may not set: every field the starter writes itself (each JSON name of {@link OpenAiChatRequest},
 * read from its record components, so that a field added there is reserved at once), and
 * {@code n}, since the starter reads one choice. Most JSON parsers keep the last of two equal keys:
 * an extra {@code model} would switch to a model the budget does not price, an extra
 * {@code messages} would replace the system and guardrail messages, an extra {@code stream} would
 * turn a chat call into a stream that is then read as malformed and counted against the breaker.
 * Names are compared ignoring case and surrounding blanks, since lenient parsers do too. An
 * endpoint of {@code protocol: openai-responses} reserves the JSON names of its own request too
 * ({@code input}, {@code max_output_tokens}, {@code store}, ...).
 */
public final class ReservedFields {

	/** Error code of the {@link LlmInvalidRequestException} raised for a reserved field. */
	public static final String ERROR_CODE = "reserved_field";

	private static final Map<String, String> ADVICE = Map.ofEntries(Map.entry("model",
			"the endpoint's configured model is sent; choose a model by naming a route (llm.routes) instead"),
			Map.entry("messages", "give the conversation as the ChatRequest's messages"),
			Map.entry("stream", "call LlmGateway.stream to stream"),
			Map.entry("stream_options", "LlmGateway.stream asks for what it needs"),
			Map.entry("temperature", "use ChatRequest.builder().temperature(...)"),
			Map.entry("max_tokens", "use ChatRequest.builder().maxTokens(...)"),
			Map.entry("n", "the gateway reads one choice; make one call per answer"),
			Map.entry("tools", "use ChatRequest.builder().tool(...)"),
			Map.entry("tool_choice", "use ChatRequest.builder().toolChoice(...)"),
			Map.entry("input", "give the conversation as the ChatRequest's messages"),
			Map.entry("max_output_tokens", "use ChatRequest.builder().maxTokens(...)"),
			Map.entry("store", "the gateway keeps nothing at the provider"));

	private static final Set<String> NAMES = names(OpenAiChatRequest.class, Set.of("n"));

	private static final Set<String> RESPONSES_NAMES = names(OpenAiResponsesWire.Request.class, NAMES);

	private ReservedFields() {
	}

	/**
	 * The reserved names, lower case.
	 * @return the names
	 */
	public static Set<String> names() {
		return NAMES;
	}

	/**
	 * Refuse a request whose extra fields set a reserved field, or a field with no name, before any
	 * upstream call.
	 * @param request the request
	 * @throws LlmInvalidRequestException naming the first such field
	 */
	public static void check(ChatRequest request) {
		check(request, NAMES);
	}

	/**
	 * Refuse, as {@link #check(ChatRequest)} does, a request for a Responses API endpoint whose extra
	 * fields set a reserved field or a field of the Responses API request the starter writes.
	 * @param request the request
	 * @throws LlmInvalidRequestException naming the first such field
	 */
	static void checkResponses(ChatRequest request) {
		check(request, RESPONSES_NAMES);
	}

	private static void check(ChatRequest request, Set<String> reserved) {
		for (String field : request.extra().keySet()) {
			if (field == null || field.isBlank()) {
				throw new LlmInvalidRequestException("ChatRequest.extra has a field with no name: give each extra field "
						+ "the JSON name the provider expects", null, 0, ERROR_CODE);
			}
			String name = normalized(field);
			if (reserved.contains(name)) {
				throw new LlmInvalidRequestException("ChatRequest.extra sets '" + field
						+ "', a field the starter writes or reads itself, so it is not sent: "
						+ ADVICE.getOrDefault(name, "set it through the ChatRequest's own fields") + ".", null, 0,
						ERROR_CODE);
			}
		}
	}

	private static String normalized(String field) {
		return field.strip().toLowerCase(Locale.ROOT);
	}

	private static Set<String> names(Class<? extends Record> wire, Set<String> more) {
		Set<String> names = new TreeSet<>(more);
		for (RecordComponent component : wire.getRecordComponents()) {
			try {
				JsonProperty property = wire.getDeclaredField(component.getName())
					.getAnnotation(JsonProperty.class);
				if (property != null) {
					names.add(normalized(property.value()));
				}
			}
			catch (NoSuchFieldException ex) {
				throw new IllegalStateException("A record component always has its field", ex);
			}
		}
		return Collections.unmodifiableSet(names);
	}

}
