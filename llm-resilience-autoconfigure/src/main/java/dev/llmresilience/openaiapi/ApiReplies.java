package dev.llmresilience.openaiapi;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.failure.LlmContextLengthExceededException;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.failure.LlmUnavailableException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The error answers of the OpenAI-compatible API, shaped as OpenAI's ({@code {"error": {message,
 * type, param, code}}}), with the headers the official SDKs read: {@code x-should-retry}, and for a
 * busy answer {@code retry-after} and {@code retry-after-ms} from when the route's next breaker may
 * let calls through.
 */
final class ApiReplies {

	private static final Log logger = LogFactory.getLog(ApiReplies.class);

	static final String REQUEST_ID = "x-request-id";

	static final String TIER = "x-llm-tier";

	static final String ENDPOINT = "x-llm-endpoint";

	static final String SHOULD_RETRY = "x-should-retry";

	/** Set on the answers sent without reading the body: the connection is closed, not drained. */
	static final String CONNECTION = "connection";

	private static final String INVALID_REQUEST = "invalid_request_error";

	private static final Pattern PLAIN_PATH = Pattern.compile("[A-Za-z0-9._~/-]{1,200}");

	private static final Pattern PLAIN_METHOD = Pattern.compile("[A-Z]{1,16}");

	private final OpenAiApiCodec codec;

	private final BreakerWaits waits;

	ApiReplies(OpenAiApiCodec codec, BreakerWaits waits) {
		this.codec = codec;
		this.waits = waits;
	}

	OpenAiApiReply unauthorized(String requestId) {
		// never repeats what the client sent: a wrong key may be a key for something else
		return error(401, requestId, "Incorrect API key provided. Send one of the keys configured in llm.openai-api.api-keys as 'Authorization: Bearer <key>'.",
				INVALID_REQUEST, null, "invalid_api_key", Map.of("www-authenticate", "Bearer"));
	}

	OpenAiApiReply tooLarge(String requestId, long maxBytes) {
		return error(413, requestId, "The request body is larger than " + maxBytes + " bytes (llm.openai-api.max-request-size).",
				INVALID_REQUEST, null, "request_too_large", Map.of());
	}

	/**
	 * The answer when as many bodies are being read as {@code max-concurrent-body-reads} allows: a
	 * 503 the SDKs retry after a second, sent without reading the body.
	 */
	OpenAiApiReply tooManyReads(String requestId, int maxReads) {
		return error(503, requestId, "The gateway is already reading " + maxReads + " request bodies, as many as "
				+ "llm.openai-api.max-concurrent-body-reads allows at once. Try again in a second.", "service_unavailable",
				null, "too_many_concurrent_reads", Map.of("retry-after", "1", "retry-after-ms", "1000", SHOULD_RETRY, "true"));
	}

	/**
	 * OpenAI's answer to a method and path it does not serve, naming the three this API serves. The
	 * path is repeated only when it is short and plain.
	 */
	OpenAiApiReply notFound(String requestId, String method, String path, String basePath) {
		String asked = (PLAIN_PATH.matcher(path).matches() && PLAIN_METHOD.matcher(method).matches())
				? method + " " + path : "this method and path";
		return error(404, requestId, "Invalid URL (" + asked + "): this API serves POST " + basePath
				+ "/chat/completions, POST " + basePath + "/responses and GET " + basePath + "/models.", INVALID_REQUEST,
				null, "unknown_url", Map.of());
	}

	/** The same answer, telling the web stack to close the connection instead of reading the body. */
	static OpenAiApiReply closing(OpenAiApiReply reply) {
		Map<String, String> headers = new LinkedHashMap<>(reply.headers());
		headers.put(CONNECTION, "close");
		return new OpenAiApiReply(reply.status(), headers, reply.body(), reply.events());
	}

	OpenAiApiReply badRequest(String requestId, String message, @Nullable String param, @Nullable String code) {
		return error(400, requestId, message, INVALID_REQUEST, param, code, Map.of());
	}

	OpenAiApiReply unknownModel(String requestId, String model, Iterable<String> routes) {
		return error(404, requestId, "The model '" + model + "' does not exist: use one of the routes " + routes + ".",
				INVALID_REQUEST, "model", "model_not_found", Map.of());
	}

	/**
	 * The answer when nothing could answer now: 503 {@code llm_busy}, or 400 {@code content_filter}
	 * when the providers' filters blocked the request (trying again unchanged cannot help). A 503
	 * that carries {@code retry-after} says the same wait in its message (the configured busy message,
	 * written for people, names none or another); one without it has the busy message.
	 */
	OpenAiApiReply busy(String requestId, String route, String message, boolean contentFiltered) {
		if (contentFiltered) {
			return error(400, requestId, message, INVALID_REQUEST, "messages", ChatResponse.CONTENT_FILTER, Map.of(TIER, "BUSY"));
		}
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put(TIER, "BUSY");
		Optional<Duration> wait = this.waits.untilNextCall(route);
		String text = message;
		if (wait.isPresent()) {
			long millis = Math.max(1000, wait.get().toMillis());
			long seconds = (millis + 999) / 1000;
			headers.put("retry-after", String.valueOf(seconds));
			headers.put("retry-after-ms", String.valueOf(millis));
			headers.put(SHOULD_RETRY, "true");
			text = "No endpoint of route '" + route + "' can answer now. Try again in " + seconds
					+ ((seconds == 1) ? " second" : " seconds") + " (retry-after), when its next circuit breaker lets a call through.";
		}
		return error(503, requestId, text, "service_unavailable", null, "llm_busy", headers);
	}

	/**
	 * The answer to a failed gateway call.
	 * @param requestId the request's id
	 * @param route the route called
	 * @param error the failure
	 * @param busyMessage the message of a busy answer
	 * @return the reply
	 */
	OpenAiApiReply failure(String requestId, String route, Throwable error, String busyMessage) {
		if (error instanceof LlmUnavailableException) {
			return busy(requestId, route, busyMessage, false);
		}
		if (error instanceof LlmContextLengthExceededException tooLong) {
			return badRequest(requestId, tooLong.getMessage(), "messages", "context_length_exceeded");
		}
		if (error instanceof LlmInvalidRequestException invalid) {
			return badRequest(requestId, invalid.getMessage(), null, invalid.code());
		}
		logger.warn("OpenAI-compatible API request " + requestId + " on route '" + route + "' failed: " + error);
		return error(500, requestId, "The gateway failed to answer (request " + requestId + ").", "server_error", null,
				"internal_error", Map.of());
	}

	/**
	 * The data of the event that ends a stream that failed after it started: the official SDKs
	 * raise it as an error, where a silent close would look like a whole answer.
	 */
	String streamError(String requestId, Throwable error) {
		return this.codec.error(streamErrorMessage(requestId, error), "server_error", null, "stream_interrupted");
	}

	/** What the event that ends a stream that failed after it started says. */
	static String streamErrorMessage(String requestId, Throwable error) {
		return (error instanceof LlmStreamInterruptedException interrupted)
				? "The answer broke off after it had started (" + interrupted.partial().length()
						+ " characters sent); it is incomplete. Ask again. (request " + requestId + ")"
				: "The answer failed after it had started; it is incomplete. Ask again. (request " + requestId + ")";
	}

	static Map<String, String> answered(String requestId, ChatResponse response) {
		return tierHeaders(requestId, response.tier().name(), response.endpoint());
	}

	static Map<String, String> tierHeaders(String requestId, String tier, @Nullable String endpoint) {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put(REQUEST_ID, requestId);
		headers.put(TIER, tier);
		if (endpoint != null) {
			headers.put(ENDPOINT, endpoint);
		}
		return headers;
	}

	private OpenAiApiReply error(int status, String requestId, String message, String type, @Nullable String param,
			@Nullable String code, Map<String, String> extraHeaders) {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put(REQUEST_ID, requestId);
		headers.put(SHOULD_RETRY, "false");
		headers.putAll(extraHeaders);
		byte[] body = this.codec.error(message, type, param, code).getBytes(StandardCharsets.UTF_8);
		return new OpenAiApiReply(status, headers, body, null);
	}

}
