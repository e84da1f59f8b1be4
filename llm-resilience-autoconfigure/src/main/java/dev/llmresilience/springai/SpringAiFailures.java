package dev.llmresilience.springai;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.http.HttpTimeoutException;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.UpstreamFailures;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.web.client.RestClientResponseException;
import org.springframework.web.reactive.function.client.WebClientResponseException;

/**
 * What a Spring AI model's exception stands for under the failure rules. The HTTP status is read
 * where Spring AI or the vendor SDK under it exposes one: Spring's {@code RestClient} and
 * {@code WebClient} exceptions (with their headers, for {@code Retry-After}), the SDKs' service
 * exceptions ({@code statusCode()}, {@code headers()}), and the {@code "HTTP 429 - ..."} text of
 * Spring AI's {@code TransientAiException} and {@code NonTransientAiException}. Without a status,
 * timeouts and I/O errors keep their rows; a non-transient error is a configuration problem and a
 * transient one a server error. The provider's own message is never repeated: it may quote part of
 * a key this project does not know and so cannot redact.
 */
final class SpringAiFailures {

	private static final Pattern HTTP_STATUS = Pattern.compile("^HTTP (\\d{3})\\b");

	private static final String NON_TRANSIENT = "org.springframework.ai.retry.NonTransientAiException";

	private static final String TRANSIENT = "org.springframework.ai.retry.TransientAiException";

	private final UpstreamFailures failures;

	SpringAiFailures(UpstreamFailures failures) {
		this.failures = failures;
	}

	Throwable classify(String endpoint, Throwable error) {
		if (error instanceof LlmException) {
			return error;
		}
		for (Throwable cause = error; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			Integer status = status(cause);
			if (status != null) {
				return this.failures.classifyStatus(endpoint, status, headers(cause), null);
			}
		}
		String type = error.getClass().getSimpleName();
		if (has(error, TimeoutException.class) || has(error, HttpTimeoutException.class)
				|| has(error, java.net.SocketTimeoutException.class)) {
			return upstream(endpoint, Outcome.TIMEOUT, "The Spring AI model timed out (" + type + ")");
		}
		if (has(error, IOException.class)) {
			return upstream(endpoint, Outcome.CONNECTION_FAILED, "The Spring AI model could not reach its provider (" + type + ")");
		}
		if (isA(error, NON_TRANSIENT)) {
			return upstream(endpoint, Outcome.CONFIGURATION_ERROR,
					"The Spring AI model refused the call as non-transient (" + type + "): check the bean's configuration");
		}
		return upstream(endpoint, isA(error, TRANSIENT) ? Outcome.SERVER_ERROR : Outcome.CONNECTION_FAILED,
				"The Spring AI model failed (" + type + ")");
	}

	private static @Nullable Integer status(Throwable error) {
		if (error instanceof RestClientResponseException rest) {
			return rest.getStatusCode().value();
		}
		if (error instanceof WebClientResponseException web) {
			return web.getStatusCode().value();
		}
		if (isA(error, TRANSIENT) || isA(error, NON_TRANSIENT)) {
			Matcher matcher = HTTP_STATUS.matcher(String.valueOf(error.getMessage()));
			return matcher.find() ? Integer.valueOf(matcher.group(1)) : null;
		}
		// the vendor SDKs' service exceptions (OpenAI, Anthropic): int statusCode()
		Object status = invoke(error, "statusCode");
		return (status instanceof Integer code && code >= 100 && code < 600) ? code : null;
	}

	private static HttpHeaders headers(Throwable error) {
		if (error instanceof RestClientResponseException rest && rest.getResponseHeaders() != null) {
			return rest.getResponseHeaders();
		}
		if (error instanceof WebClientResponseException web) {
			return web.getHeaders();
		}
		HttpHeaders headers = new HttpHeaders();
		Object sdkHeaders = invoke(error, "headers");
		if (sdkHeaders != null) {
			for (String name : List.of("retry-after-ms", HttpHeaders.RETRY_AFTER)) {
				Object values = invoke(sdkHeaders, "values", name);
				if (values instanceof List<?> list && !list.isEmpty()) {
					headers.set(name, String.valueOf(list.get(0)));
				}
			}
		}
		return headers;
	}

	private static @Nullable Object invoke(Object target, String name, Object... args) {
		try {
			Class<?>[] types = (args.length == 0) ? new Class<?>[0] : new Class<?>[] { String.class };
			Method method = target.getClass().getMethod(name, types);
			return method.invoke(target, args);
		}
		catch (ReflectiveOperationException | RuntimeException ex) {
			return null;
		}
	}

	private static boolean isA(Throwable error, String className) {
		for (Class<?> type = error.getClass(); type != null; type = type.getSuperclass()) {
			if (type.getName().equals(className)) {
				return true;
			}
		}
		return false;
	}

	private static boolean has(Throwable error, Class<? extends Throwable> type) {
		for (Throwable cause = error; cause != null; cause = (cause.getCause() != cause) ? cause.getCause() : null) {
			if (type.isInstance(cause)) {
				return true;
			}
		}
		return false;
	}

	private static LlmUpstreamException upstream(String endpoint, Outcome outcome, String message) {
		return new LlmUpstreamException(endpoint, outcome, 0, null, message, null);
	}

}
