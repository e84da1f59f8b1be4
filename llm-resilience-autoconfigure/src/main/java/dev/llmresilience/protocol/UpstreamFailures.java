package dev.llmresilience.protocol;

import java.time.Clock;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.stream.Stream;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmContextLengthExceededException;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.failure.LlmUpstreamException.ProviderError;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * The wire half of docs/failure-rules.md: what an HTTP status, a provider's error code, a 2xx body,
 * an error of the transport and the end or break of a stream stand for, as the exception (and so the
 * {@link Outcome}) every protocol client and the endpoint's attempt raise. Fixed: what the retry and
 * the breaker then do with an outcome is the replaceable {@link FailureClassifier}'s decision, and
 * what the gateway does with it is {@link Outcome#action()}.
 * <p>
 * The auto-configuration creates one (bean {@code llmUpstreamFailures}, on the system clock, with
 * every key and header value the application configures) and hands it to every built-in client
 * factory; an application declares its own only to measure an HTTP-date {@code Retry-After} against
 * another clock (and should then pass the secrets too: without them each endpoint's text is
 * redacted of its own key and header values only).
 */
public final class UpstreamFailures {

	private static final String CONTENT_FILTER = ChatResponse.CONTENT_FILTER;

	private static final String CONTEXT_LENGTH_EXCEEDED = "context_length_exceeded";

	private final Clock clock;

	private final List<String> secrets;

	private final RateLimitHeaders rateLimitHeaders;

	/**
	 * Create the mapping.
	 * @param clock the clock that an HTTP-date {@code Retry-After} is measured against
	 */
	public UpstreamFailures(Clock clock) {
		this(clock, List.of());
	}

	/**
	 * Create the mapping.
	 * @param clock the clock that an HTTP-date {@code Retry-After} is measured against
	 * @param secrets what no endpoint's provider text may repeat, beside the endpoint's own key and
	 * header values: every other key the application configures (other endpoints', the
	 * OpenAI-compatible API's client keys)
	 */
	public UpstreamFailures(Clock clock, Collection<String> secrets) {
		this.clock = clock;
		this.secrets = secrets.stream().filter((secret) -> !secret.isBlank()).distinct().toList();
		this.rateLimitHeaders = new RateLimitHeaders(clock);
	}

	/**
	 * What an endpoint's provider text must not repeat: its key and header values
	 * ({@link ClientSettings#secrets()}) and the application's other secrets.
	 * @param settings the endpoint's settings
	 * @return the values to redact from its provider's text
	 */
	public List<String> secretsOf(ClientSettings settings) {
		return with(settings.secrets());
	}

	private List<String> with(Collection<String> own) {
		if (this.secrets.isEmpty()) {
			return List.copyOf(own);
		}
		return Stream.concat(own.stream(), this.secrets.stream()).distinct().toList();
	}

	/**
	 * Classify a non-2xx response.
	 * @param endpoint the endpoint's name
	 * @param status the HTTP status
	 * @param headers the response headers (for {@code Retry-After})
	 * @param error the error the body carried, or {@code null} when it had none that could be read
	 * @return the exception that stands for the outcome
	 */
	public LlmException classifyStatus(String endpoint, int status, HttpHeaders headers, @Nullable ProviderError error) {
		String code = (error != null) ? error.code() : null;
		String detail = (error != null && error.message() != null) ? ": " + error.message() : "";
		if (CONTENT_FILTER.equals(code)) {
			return upstream(endpoint, Outcome.CONTENT_FILTERED, status, "The provider's content filter blocked the request" + detail);
		}
		if (status == 429) {
			return new LlmUpstreamException(endpoint, Outcome.RATE_LIMITED, status, retryAfter(headers),
					"Rate limited (HTTP 429)" + detail, null);
		}
		if (status == 408 || status == 409 || status >= 500) {
			return upstream(endpoint, Outcome.SERVER_ERROR, status, "Provider error (HTTP " + status + ")" + detail);
		}
		if (status == 400 || status == 413 || status == 422) {
			if (CONTEXT_LENGTH_EXCEEDED.equals(code)) {
				return new LlmContextLengthExceededException("The prompt is too long for the model" + detail, endpoint,
						status, code);
			}
			String errorCode = (code != null) ? code : (error != null) ? error.type() : null;
			return new LlmInvalidRequestException("The provider refused the request as invalid (HTTP " + status + ")"
					+ detail, endpoint, status, errorCode);
		}
		return upstream(endpoint, Outcome.CONFIGURATION_ERROR, status, "HTTP " + status
				+ ": check the endpoint's api-key, model and base-url" + detail);
	}

	/**
	 * Classify a 2xx completion.
	 * @param endpoint the endpoint's name
	 * @param hasChoice whether the body had at least one choice
	 * @param content the first choice's text, or {@code null}
	 * @param hasToolCalls whether the first choice called tools
	 * @param finishReason the first choice's finish reason, or {@code null}
	 * @return {@code null} when the completion is usable, else the failure it stands for
	 */
	public @Nullable LlmUpstreamException classifyCompletion(String endpoint, boolean hasChoice,
			@Nullable String content, boolean hasToolCalls, @Nullable String finishReason) {
		if (!hasChoice) {
			return upstream(endpoint, Outcome.MALFORMED_RESPONSE, 200, "The response has no choices");
		}
		if (CONTENT_FILTER.equals(finishReason)) {
			return upstream(endpoint, Outcome.CONTENT_FILTERED, 200, "The provider's content filter blocked the answer");
		}
		if (!hasToolCalls && (content == null || content.isBlank())) {
			return upstream(endpoint, Outcome.EMPTY_RESPONSE, 200, "The response has neither content nor tool calls");
		}
		return null;
	}

	/**
	 * Classify an error raised while calling: transport failures, timeouts, an unreadable body.
	 * Exceptions that are already classified pass through unchanged.
	 * @param endpoint the endpoint's name
	 * @param error the error
	 * @return the classified error
	 */
	public Throwable classifyError(String endpoint, Throwable error) {
		return TransportFailures.classify(endpoint, error, this.secrets);
	}

	/**
	 * Classify an error raised while calling, as {@link #classifyError(String, Throwable)} does, with
	 * the endpoint's secrets redacted from what the error's messages say: an error of the transport
	 * or a decoder may quote what the provider sent. An unknown error is kept as the cause only as a
	 * {@link RedactedException}.
	 * @param endpoint the endpoint's name
	 * @param error the error
	 * @param secrets the endpoint's key and header values (the application's other secrets are added)
	 * @return the classified error
	 */
	public Throwable classifyError(String endpoint, Throwable error, Collection<String> secrets) {
		return TransportFailures.classify(endpoint, error, with(secrets));
	}

	/**
	 * Classify an error that ended a streamed attempt. Before the first content chunk reached the
	 * caller it is classified like any call ({@link #classifyError}), so it is retried and falls back
	 * like {@code chat}. After it, it becomes an {@link LlmStreamInterruptedException}: never retried,
	 * since a new attempt would repeat what the caller already has; {@link Outcome#STREAM_STALLED}
	 * when the stream fell silent, else {@link Outcome#STREAM_INTERRUPTED}. Once the model has sent
	 * its finish reason the answer is whole, and a connection that then breaks or stalls before the
	 * usage chunk or {@code [DONE]} ends the stream normally.
	 * @param endpoint the endpoint's name
	 * @param error the error
	 * @param started whether a content (or tool-call) chunk has reached the caller
	 * @param partial the text that has reached the caller
	 * @param finishReason the finish reason the model sent, or {@code null}
	 * @return the classified error, or {@code null} when the stream is to end normally
	 */
	public @Nullable Throwable classifyStreamError(String endpoint, Throwable error, boolean started, String partial,
			@Nullable String finishReason) {
		if (finishReason != null) {
			return null;
		}
		Throwable classified = classifyError(endpoint, error);
		if (!started || classified instanceof LlmStreamInterruptedException) {
			return classified;
		}
		Outcome outcome = (FailureClassifier.outcomeOf(classified) == Outcome.TIMEOUT) ? Outcome.STREAM_STALLED
				: Outcome.STREAM_INTERRUPTED;
		return new LlmStreamInterruptedException(endpoint, outcome, partial, "The stream of endpoint '" + endpoint
				+ "' broke after it had started (" + classified.getMessage() + "). The " + partial.length()
				+ " characters received are in partial(); the answer is not restarted, so that nothing is repeated. "
				+ "Set llm.gateway.stream.resume-on-fallback=true to continue it on the route's next endpoint.",
				classified);
	}

	/**
	 * Classify a stream that ended normally ({@code [DONE]}, or the connection closed after the
	 * finish reason).
	 * @param endpoint the endpoint's name
	 * @param started whether a content (or tool-call) chunk has reached the caller
	 * @param finishReason the finish reason the model sent, or {@code null}
	 * @return {@link Outcome#SUCCESS}; {@link Outcome#CONTENT_FILTERED} when the provider's filter cut
	 * the answer, which the breaker ignores
	 * @throws LlmUpstreamException when nothing reached the caller: the same failure as an empty or
	 * filtered {@code chat} answer
	 */
	public Outcome classifyStreamEnd(String endpoint, boolean started, @Nullable String finishReason) {
		if (!started) {
			LlmUpstreamException failure = classifyCompletion(endpoint, true, null, false, finishReason);
			throw (failure != null) ? failure
					: upstream(endpoint, Outcome.EMPTY_RESPONSE, 200, "The stream had no content");
		}
		return CONTENT_FILTER.equals(finishReason) ? Outcome.CONTENT_FILTERED : Outcome.SUCCESS;
	}

	/**
	 * The failure of a stream whose body ended with neither {@code [DONE]} nor a finish reason.
	 * @param endpoint the endpoint's name
	 * @return a {@link Outcome#CONNECTION_FAILED} failure
	 */
	public LlmUpstreamException truncatedStream(String endpoint) {
		return truncatedStream(endpoint, "[DONE]");
	}

	/**
	 * The failure of a stream whose body ended before the event that ends the protocol's streams.
	 * @param endpoint the endpoint's name
	 * @param end the event that should have ended it, e.g. {@code message_stop}
	 * @return a {@link Outcome#CONNECTION_FAILED} failure
	 */
	public LlmUpstreamException truncatedStream(String endpoint, String end) {
		return upstream(endpoint, Outcome.CONNECTION_FAILED, 200,
				"The stream ended before " + end + " and without a finish reason");
	}

	/**
	 * The wait a provider asked for: {@code retry-after-ms} (OpenAI, Azure OpenAI), else
	 * {@code x-ms-retry-after-ms} (Azure), else {@code Retry-After} (every provider, Anthropic
	 * included) in seconds or as an HTTP date.
	 * @param headers the response headers
	 * @return the wait, or {@code null} when there is none that can be read
	 */
	public @Nullable Duration retryAfter(HttpHeaders headers) {
		return RetryAfter.of(headers, this.clock);
	}

	/**
	 * What a response's headers say of the provider's rate limits: OpenAI and Azure OpenAI
	 * {@code x-ratelimit-{limit,remaining,reset}-{requests,tokens}} (resets as Go durations such as
	 * {@code 6m0s}), else Anthropic
	 * {@code anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}}
	 * (resets as RFC 3339 times, measured against this mapping's clock). A value that cannot be
	 * read is ignored, with one WARN per endpoint and header.
	 * @param endpoint the endpoint's name, for the warning
	 * @param headers the response headers
	 * @return the limits, or {@code null} when the headers say nothing of them
	 */
	public ClientSettings.@Nullable ProviderLimits rateLimits(String endpoint, HttpHeaders headers) {
		return this.rateLimitHeaders.read(endpoint, headers);
	}

	private static LlmUpstreamException upstream(String endpoint, Outcome outcome, int status, String message) {
		return new LlmUpstreamException(endpoint, outcome, status, null, message, null);
	}

}
