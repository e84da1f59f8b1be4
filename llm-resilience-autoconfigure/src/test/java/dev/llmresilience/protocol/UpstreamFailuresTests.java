package dev.llmresilience.protocol;

import java.net.ConnectException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.TimeoutException;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.failure.LlmUpstreamException.ProviderError;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.timeout.ReadTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.web.reactive.function.client.WebClientRequestException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The wire mapping on its own: statuses, provider error codes, {@code Retry-After} headers and
 * transport errors onto the {@link Outcome} values of docs/failure-rules.md (with what the
 * {@link FailureClassifier} then decides where the header matters). The over-HTTP tests in the
 * {@code gateway} package show the same rows as a user sees them.
 */
class UpstreamFailuresTests {

	private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

	private static final String KEY = "sk-redaction-0123456789abcdef";

	private static final String HEADER = "org-redaction-987654";

	private final UpstreamFailures failures = new UpstreamFailures(Clock.fixed(NOW, ZoneOffset.UTC));

	private final FailureClassifier classifier = new FailureClassifier();

	@ParameterizedTest
	@CsvSource(nullValues = "-", value = { "408, -, SERVER_ERROR", "409, -, SERVER_ERROR", "500, -, SERVER_ERROR",
			"502, -, SERVER_ERROR", "503, -, SERVER_ERROR", "504, -, SERVER_ERROR", "529, -, SERVER_ERROR",
			"429, rate_limit_exceeded, RATE_LIMITED", "400, invalid_request_error, INVALID_REQUEST",
			"413, -, INVALID_REQUEST", "422, -, INVALID_REQUEST", "400, context_length_exceeded, CONTEXT_LENGTH_EXCEEDED",
			"400, content_filter, CONTENT_FILTERED", "401, invalid_api_key, CONFIGURATION_ERROR",
			"402, -, CONFIGURATION_ERROR", "403, -, CONFIGURATION_ERROR", "404, model_not_found, CONFIGURATION_ERROR",
			"302, -, CONFIGURATION_ERROR" })
	void statusIsClassified(int status, String code, Outcome expected) {
		ProviderError error = (code != null) ? new ProviderError("error", code, "said the provider") : null;
		LlmException classified = this.failures.classifyStatus("ep", status, new HttpHeaders(), error);
		assertThat(FailureClassifier.outcomeOf(classified)).isEqualTo(expected);
		assertThat(classified.endpoint()).isEqualTo("ep");
		assertThat(classified.getMessage()).isNotBlank();
	}

	@Test
	void retryAfterInSecondsIsRead() {
		assertThat(this.failures.retryAfter(headers(HttpHeaders.RETRY_AFTER, "2"))).isEqualTo(Duration.ofSeconds(2));
	}

	@Test
	void retryAfterAsHttpDateIsMeasuredAgainstTheClock() {
		assertThat(this.failures.retryAfter(headers(HttpHeaders.RETRY_AFTER, "Sun, 01 Mar 2026 12:00:05 GMT")))
			.isEqualTo(Duration.ofSeconds(5));
	}

	@Test
	void retryAfterMillisTakesPrecedenceOverRetryAfter() {
		HttpHeaders headers = headers(HttpHeaders.RETRY_AFTER, "30");
		headers.set("retry-after-ms", "1500");
		assertThat(this.failures.retryAfter(headers)).isEqualTo(Duration.ofMillis(1500));
	}

	@Test
	void unreadableOrMissingRetryAfterIsNone() {
		assertThat(this.failures.retryAfter(headers(HttpHeaders.RETRY_AFTER, "soon"))).isNull();
		assertThat(this.failures.retryAfter(new HttpHeaders())).isNull();
	}

	@ParameterizedTest(name = "{0}: {1}")
	@CsvSource(delimiter = '|', value = { "Retry-After | 0", "Retry-After | -5", "Retry-After | -0.5",
			"Retry-After | NaN", "Retry-After | Infinity", "Retry-After | -Infinity", "Retry-After | 1e400",
			"Retry-After | 1e300", "Retry-After | Sun, 01 Mar 2026 11:59:00 GMT",
			"Retry-After | Sun, 01 Mar 2026 12:00:00 GMT", "retry-after-ms | -1", "retry-after-ms | 0",
			"retry-after-ms | NaN", "retry-after-ms | Infinity", "retry-after-ms | 1e300",
			"x-ms-retry-after-ms | -1", "x-ms-retry-after-ms | NaN", "x-ms-retry-after-ms | Infinity" })
	void retryAfterThatAsksForNoWaitStillToComeIsNone(String header, String value) {
		assertThat(this.failures.retryAfter(headers(header, value))).isNull();
		assertThat(this.classifier.retryAfter(this.failures.classifyStatus("ep", 429, headers(header, value), null)))
			.isNull();
	}

	@ParameterizedTest(name = "{0}: {1}")
	@CsvSource(delimiter = '|', value = { "retry-after-ms | -1", "retry-after-ms | NaN", "x-ms-retry-after-ms | 0",
			"x-ms-retry-after-ms | Infinity" })
	void unusableMillisecondHeaderGivesWayToRetryAfter(String header, String value) {
		HttpHeaders headers = headers(HttpHeaders.RETRY_AFTER, "2");
		headers.set(header, value);
		assertThat(this.failures.retryAfter(headers)).isEqualTo(Duration.ofSeconds(2));
	}

	@Test
	void shortestPositiveRetryAfterIsAWaitStillToCome() {
		assertThat(this.failures.retryAfter(headers("retry-after-ms", "0.2"))).isEqualTo(Duration.ofMillis(1));
		assertThat(this.failures.retryAfter(headers(HttpHeaders.RETRY_AFTER, "0.0005"))).isEqualTo(Duration.ofMillis(1));
		assertThat(this.failures.retryAfter(headers(HttpHeaders.RETRY_AFTER, "Sun, 01 Mar 2026 12:00:01 GMT")))
			.isEqualTo(Duration.ofSeconds(1));
	}

	@Test
	void largeRetryAfterIsReadAndNotRetriedOnTheSameEndpoint() {
		Duration max = Duration.ofSeconds(10);
		assertThat(this.failures.retryAfter(headers(HttpHeaders.RETRY_AFTER, "86400"))).isEqualTo(Duration.ofDays(1));
		assertThat(this.failures.retryAfter(headers(HttpHeaders.RETRY_AFTER, "Fri, 01 Mar 2030 12:00:00 GMT")))
			.isGreaterThan(Duration.ofDays(365));
		assertThat(this.classifier.isRetryable(rateLimited("86400"), max)).isFalse();
		assertThat(this.classifier.isRetryable(rateLimited("1e15"), max)).isFalse();
		assertThat(this.classifier.isRetryable(rateLimited("Fri, 01 Mar 2030 12:00:00 GMT"), max)).isFalse();
	}

	@Test
	void rateLimitIsRetriedOnlyWhenItsRetryAfterFitsWithinMaxRetryAfter() {
		Duration max = Duration.ofSeconds(10);
		assertThat(this.classifier.isRetryable(rateLimited("10"), max)).isTrue();
		assertThat(this.classifier.isRetryable(rateLimited("11"), max)).isFalse();
		assertThat(this.classifier.isRetryable(
				this.failures.classifyStatus("ep", 429, new HttpHeaders(), null), max)).isTrue();
	}

	@Test
	void transportErrorsAreClassified() {
		assertThat(outcomeOfError(new TimeoutException("Did not observe any item"))).isEqualTo(Outcome.TIMEOUT);
		assertThat(outcomeOfError(ReadTimeoutException.INSTANCE)).isEqualTo(Outcome.TIMEOUT);
		assertThat(outcomeOfError(new WebClientRequestException(new ConnectTimeoutException("connection timed out"),
				HttpMethod.POST, URI.create("http://localhost/v1/chat/completions"), new HttpHeaders())))
			.isEqualTo(Outcome.TIMEOUT);
		assertThat(outcomeOfError(new WebClientRequestException(new ConnectException("Connection refused"),
				HttpMethod.POST, URI.create("http://localhost/v1/chat/completions"), new HttpHeaders())))
			.isEqualTo(Outcome.CONNECTION_FAILED);
		assertThat(outcomeOfError(new DataBufferLimitException("Exceeded limit on max bytes to buffer")))
			.isEqualTo(Outcome.MALFORMED_RESPONSE);
	}

	@Test
	void refusedPermitsPassThroughUnchanged() {
		CallNotPermittedException open = CallNotPermittedException
			.createCallNotPermittedException(CircuitBreaker.ofDefaults("ep"));
		BulkheadFullException full = BulkheadFullException.createBulkheadFullException(Bulkhead.ofDefaults("ep"));
		assertThat(this.failures.classifyError("ep", open)).isSameAs(open);
		assertThat(this.failures.classifyError("ep", full)).isSameAs(full);
	}

	@Test
	void unknownErrorIsKeptOnlyAsARedactedStandInWithItsTypeAndStackTrace() {
		IllegalStateException inner = new IllegalStateException("inner saw " + HEADER);
		IllegalArgumentException error = new IllegalArgumentException(
				"decoder could not read 'Authorization: Bearer " + KEY + "'", inner);
		Throwable classified = this.failures.classifyError("primary", error, List.of(KEY, HEADER));
		assertThat(classified).isInstanceOfSatisfying(LlmUpstreamException.class,
				(upstream) -> assertThat(upstream.outcome()).isEqualTo(Outcome.CONNECTION_FAILED));
		assertThat(classified.getMessage()).startsWith("Call failed: IllegalArgumentException (")
			.doesNotContain(KEY)
			.contains("[redacted]");
		assertThat(classified.getCause()).isInstanceOfSatisfying(RedactedException.class, (cause) -> {
			assertThat(cause.type()).isEqualTo(IllegalArgumentException.class.getName());
			assertThat(cause.toString()).startsWith(IllegalArgumentException.class.getName() + ": ")
				.doesNotContain(KEY);
			assertThat(cause.getStackTrace()).isEqualTo(error.getStackTrace());
			assertThat(cause.getCause()).isInstanceOf(RedactedException.class)
				.hasMessage("inner saw [redacted]");
		});
	}

	private Outcome outcomeOfError(Throwable error) {
		return FailureClassifier.outcomeOf(this.failures.classifyError("ep", error));
	}

	private LlmException rateLimited(String retryAfter) {
		return this.failures.classifyStatus("ep", 429, headers(HttpHeaders.RETRY_AFTER, retryAfter), null);
	}

	private static HttpHeaders headers(String name, String value) {
		HttpHeaders headers = new HttpHeaders();
		headers.set(name, value);
		return headers;
	}

}
