package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.protocol.openai.ReservedFields;
import org.jspecify.annotations.Nullable;

/**
 * What the gateway refuses of a caller's request before it takes any permit or makes any upstream
 * call: extra fields that would override the body fields the starter writes ({@link ReservedFields}),
 * and a {@code timeout} or {@code deadline} above the configured ceiling, which would let one caller
 * hold an endpoint's bulkhead permit (and a connection) for as long as it likes. The refusal is an
 * {@link LlmInvalidRequestException}: the caller's own error, never retried, never counted by a
 * breaker.
 */
final class RequestChecks {

	/** Error code of a timeout or deadline above its ceiling. */
	public static final String TOO_LONG = "duration_above_ceiling";

	private RequestChecks() {
	}

	/**
	 * Refuse a request the gateway must not send.
	 * @param request the caller's request
	 * @param settings the gateway's settings, with the ceilings
	 * @throws LlmInvalidRequestException naming the field at fault
	 */
	public static void check(ChatRequest request, GatewaySettings settings) {
		ReservedFields.check(request);
		atMost("timeout", request.timeout(), "llm.gateway.max-request-timeout", settings.maxRequestTimeout());
		atMost("deadline", request.deadline(), "llm.gateway.max-request-deadline", settings.maxRequestDeadline());
	}

	private static void atMost(String field, @Nullable Duration value, String property, @Nullable Duration ceiling) {
		if (value != null && ceiling != null && value.compareTo(ceiling) > 0) {
			throw new LlmInvalidRequestException("ChatRequest." + field + " is " + value + ", longer than " + property
					+ " (" + ceiling + "): ask for " + ceiling + " or less, or raise " + property + ".", null, 0,
					TOO_LONG);
		}
	}

}
