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
 * Names are compared ignoring case and surrounding blanks, since lenient parsers do too.
 */
public final class ReservedFields {

	/** Error code of the {@link LlmInvalidRequestException} raised for a reserved field. */
	public static final String ERROR_CODE = "reserved_field";

	private static final Map<String, String> ADVICE = Map.of("model",
			"the endpoint's configured model is sent; choose a model by naming a route (llm.routes) instead",
			"messages", "give the conversation as the ChatRequest's messages", "stream",
			"call LlmGateway.stream to stream", "stream_options", "LlmGateway.stream asks for what it needs",
			"temperature", "use ChatRequest.builder().temperature(...)", "max_tokens",
			"use ChatRequest.builder().maxTokens(...)", "n", "the gateway reads one choice; make one call per answer",
			"tools", "use ChatRequest.builder().tool(...)", "tool_choice", "use ChatRequest.builder().toolChoice(...)");

	private static final Set<String> NAMES = names(Set.of("n"));

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
		for (String field : request.extra().keySet()) {
			if (field == null || field.isBlank()) {
				throw new LlmInvalidRequestException("ChatRequest.extra has a field with no name: give each extra field "
						+ "the JSON name the provider expects", null, 0, ERROR_CODE);
			}
			String name = normalized(field);
			if (NAMES.contains(name)) {
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

	private static Set<String> names(Set<String> more) {
		Set<String> names = new TreeSet<>(more);
		for (RecordComponent component : OpenAiChatRequest.class.getRecordComponents()) {
			try {
				JsonProperty property = OpenAiChatRequest.class.getDeclaredField(component.getName())
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
