package dev.llmresilience.protocol;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import org.jspecify.annotations.Nullable;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads what providers send, bodies and events alike, with one mapper that ignores the fields
 * providers add all the time; and says what an unreadable answer is: a
 * {@link Outcome#MALFORMED_RESPONSE}, retried and counted like any failed answer.
 */
public final class WireJson {

	private static final JsonMapper MAPPER = JsonMapper.builder()
		.disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
		.disable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
		.build();

	private WireJson() {
	}

	/**
	 * The mapper, for writing requests too.
	 * @return the mapper
	 */
	public static JsonMapper mapper() {
		return MAPPER;
	}

	/**
	 * Read a 2xx body that must be an answer.
	 * @param <T> the wire type
	 * @param endpoint the endpoint's name, for the failure
	 * @param body the body
	 * @param type the wire type
	 * @return the answer
	 * @throws LlmUpstreamException a {@link Outcome#MALFORMED_RESPONSE} when the body is empty or not JSON
	 */
	public static <T> T answer(String endpoint, String body, Class<T> type) {
		try {
			T value = MAPPER.readValue(body, type);
			if (value == null) {
				throw malformed(endpoint, "The response body is empty");
			}
			return value;
		}
		catch (JacksonException ex) {
			throw malformed(endpoint, body.isBlank() ? "The response body is empty" : "The response body is not valid JSON");
		}
	}

	/**
	 * Read what may not be JSON at all: an error body (a proxy's HTML page), a stream event.
	 * @param <T> the wire type
	 * @param text the text, or {@code null}
	 * @param type the wire type
	 * @return the value, or {@code null} when the text is blank or cannot be read as one
	 */
	public static <T> @Nullable T readOrNull(@Nullable String text, Class<T> type) {
		if (text == null || text.isBlank()) {
			return null;
		}
		try {
			return MAPPER.readValue(text, type);
		}
		catch (JacksonException ex) {
			return null;
		}
	}

	/**
	 * The failure of an answer (or a stream event) that cannot be read.
	 * @param endpoint the endpoint's name
	 * @param message what was wrong with it
	 * @return a {@link Outcome#MALFORMED_RESPONSE} failure
	 */
	public static LlmUpstreamException malformed(String endpoint, String message) {
		return new LlmUpstreamException(endpoint, Outcome.MALFORMED_RESPONSE, 200, null, message, null);
	}

}
