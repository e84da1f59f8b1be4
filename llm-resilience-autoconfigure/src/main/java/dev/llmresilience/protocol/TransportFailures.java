package dev.llmresilience.protocol;

import java.io.IOException;
import java.net.ConnectException;
import java.util.Collection;
import java.util.concurrent.TimeoutException;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmUpstreamException;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.timeout.ReadTimeoutException;

import org.springframework.core.io.buffer.DataBufferLimitException;

/**
 * The transport rows of docs/failure-rules.md: what an error raised while calling (a timeout, a
 * refused or reset connection, a body too large or not JSON) stands for.
 */
final class TransportFailures {

	private TransportFailures() {
	}

	static Throwable classify(String endpoint, Throwable error, Collection<String> secrets) {
		if (error instanceof LlmException || error instanceof CallNotPermittedException
				|| error instanceof BulkheadFullException) {
			return error;
		}
		if (error instanceof TimeoutException || error instanceof ReadTimeoutException
				|| error instanceof ConnectTimeoutException || hasCause(error, ConnectTimeoutException.class)) {
			return new LlmUpstreamException(endpoint, Outcome.TIMEOUT, 0, null, "Timed out: " + Redaction.describe(error, secrets), null);
		}
		if (error instanceof DataBufferLimitException || hasCause(error, DataBufferLimitException.class)) {
			return new LlmUpstreamException(endpoint, Outcome.MALFORMED_RESPONSE, 200, null,
					"The response is larger than the endpoint's max-response-size", null);
		}
		if (error instanceof IOException || hasCause(error, IOException.class) || hasCause(error, ConnectException.class)
				|| error.getClass().getName().startsWith("reactor.netty")) {
			return new LlmUpstreamException(endpoint, Outcome.CONNECTION_FAILED, 0, null,
					"Connection failed: " + Redaction.describe(error, secrets), null);
		}
		if (error.getClass().getName().startsWith("tools.jackson")) {
			return new LlmUpstreamException(endpoint, Outcome.MALFORMED_RESPONSE, 200, null,
					"The response is not valid JSON", null);
		}
		return new LlmUpstreamException(endpoint, Outcome.CONNECTION_FAILED, 0, null,
				"Call failed: " + Redaction.describe(error, secrets), Redaction.sanitized(error, secrets));
	}

	private static boolean hasCause(Throwable error, Class<? extends Throwable> type) {
		for (Throwable cause = error.getCause(); cause != null && cause != error; cause = cause.getCause()) {
			if (type.isInstance(cause)) {
				return true;
			}
		}
		return false;
	}

}
