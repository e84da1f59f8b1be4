package dev.llmresilience.failure;

import java.net.ConnectException;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;
import java.util.concurrent.TimeoutException;

import dev.llmresilience.chat.Outcome.Action;
import dev.llmresilience.chat.Outcome;
import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.netty.channel.ConnectTimeoutException;
import io.netty.handler.timeout.ReadTimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.web.reactive.function.client.WebClientRequestException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The classifier on its own: docs/failure-rules.md row by row as {@link Outcome} values, and the
 * mapping of statuses, headers and transport errors onto them. The over-HTTP tests in the
 * {@code gateway} package show the same rows as a user sees them.
 */
class FailureClassifierTests {

	private static final Instant NOW = Instant.parse("2026-03-01T12:00:00Z");

	private final FailureClassifier classifier = new FailureClassifier(Clock.fixed(NOW, ZoneOffset.UTC));

	private record Row(boolean retried, boolean breakerFailure, Action then) {
	}

	private static final Map<Outcome, Row> CONTRACT = Map.ofEntries(
			Map.entry(Outcome.SUCCESS, new Row(false, false, Action.RETURN)),
			Map.entry(Outcome.EMPTY_RESPONSE, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.MALFORMED_RESPONSE, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.CONTENT_FILTERED, new Row(false, false, Action.FALL_BACK)),
			Map.entry(Outcome.SERVER_ERROR, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.RATE_LIMITED, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.TIMEOUT, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.CONNECTION_FAILED, new Row(true, true, Action.FALL_BACK)),
			Map.entry(Outcome.INVALID_REQUEST, new Row(false, false, Action.SURFACE)),
			Map.entry(Outcome.CONTEXT_LENGTH_EXCEEDED, new Row(false, false, Action.SURFACE)),
			Map.entry(Outcome.CONFIGURATION_ERROR, new Row(false, true, Action.FALL_BACK)),
			Map.entry(Outcome.BREAKER_OPEN, new Row(false, false, Action.FALL_BACK)),
			Map.entry(Outcome.BULKHEAD_FULL, new Row(false, false, Action.FALL_BACK)),
			// streams after their first chunk (issue 5): never retried, counted, handed to the caller
			Map.entry(Outcome.STREAM_INTERRUPTED, new Row(false, true, Action.SURFACE)),
			Map.entry(Outcome.STREAM_STALLED, new Row(false, true, Action.SURFACE)),
			// not rows of docs/failure-rules.md but of the guard and the deadline (issue 3): no call made;
			// a spent guard stops every endpoint, a deadline only those whose timeout does not fit
			Map.entry(Outcome.GUARD_TRIPPED, new Row(false, false, Action.DEGRADE)),
			// the gateway-wide limit on calls in flight (issue 18): no endpoint tried, degrade at once
			Map.entry(Outcome.GATEWAY_FULL, new Row(false, false, Action.DEGRADE)),
			Map.entry(Outcome.DEADLINE_EXCEEDED, new Row(false, false, Action.FALL_BACK)),
			// abandoned when the breaker opened before its first token (issue 10): not counted twice
			Map.entry(Outcome.RELEASED, new Row(false, false, Action.FALL_BACK)),
			// the slower side of a hedged request (issue 15): a slow call for its breaker, never a failure
			Map.entry(Outcome.HEDGE_LOST, new Row(false, false, Action.FALL_BACK)));

	@ParameterizedTest
	@EnumSource(Outcome.class)
	void everyOutcomeCarriesItsRowOfTheFailureRules(Outcome outcome) {
		assertThat(CONTRACT).containsKey(outcome);
		Row row = CONTRACT.get(outcome);
		assertThat(outcome.isRetryable()).as("retried").isEqualTo(row.retried());
		assertThat(outcome.isBreakerFailure()).as("breaker failure").isEqualTo(row.breakerFailure());
		assertThat(outcome.action()).as("then").isEqualTo(row.then());
	}

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
		LlmException classified = this.classifier.classifyStatus("ep", status, new HttpHeaders(), error);
		assertThat(FailureClassifier.outcomeOf(classified)).isEqualTo(expected);
		assertThat(classified.endpoint()).isEqualTo("ep");
		assertThat(classified.getMessage()).isNotBlank();
	}

	@Test
	void retryAfterInSecondsIsRead() {
		assertThat(this.classifier.retryAfter(headers(HttpHeaders.RETRY_AFTER, "2"))).isEqualTo(Duration.ofSeconds(2));
	}

	@Test
	void retryAfterAsHttpDateIsMeasuredAgainstTheClock() {
		assertThat(this.classifier.retryAfter(headers(HttpHeaders.RETRY_AFTER, "Sun, 01 Mar 2026 12:00:05 GMT")))
			.isEqualTo(Duration.ofSeconds(5));
		assertThat(this.classifier.retryAfter(headers(HttpHeaders.RETRY_AFTER, "Sun, 01 Mar 2026 11:59:00 GMT")))
			.isEqualTo(Duration.ZERO);
	}

	@Test
	void retryAfterMillisTakesPrecedenceOverRetryAfter() {
		HttpHeaders headers = headers(HttpHeaders.RETRY_AFTER, "30");
		headers.set("retry-after-ms", "1500");
		assertThat(this.classifier.retryAfter(headers)).isEqualTo(Duration.ofMillis(1500));
	}

	@Test
	void unreadableOrMissingRetryAfterIsNone() {
		assertThat(this.classifier.retryAfter(headers(HttpHeaders.RETRY_AFTER, "soon"))).isNull();
		assertThat(this.classifier.retryAfter(new HttpHeaders())).isNull();
	}

	@Test
	void rateLimitIsRetriedOnlyWhenItsRetryAfterFitsWithinMaxRetryAfter() {
		Duration max = Duration.ofSeconds(10);
		assertThat(this.classifier.isRetryable(rateLimited("10"), max)).isTrue();
		assertThat(this.classifier.isRetryable(rateLimited("11"), max)).isFalse();
		assertThat(this.classifier.isRetryable(
				this.classifier.classifyStatus("ep", 429, new HttpHeaders(), null), max)).isTrue();
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
	void refusedPermitsPassThroughUnchangedAndAreNeitherRetriedNorCounted() {
		CallNotPermittedException open = CallNotPermittedException
			.createCallNotPermittedException(CircuitBreaker.ofDefaults("ep"));
		BulkheadFullException full = BulkheadFullException.createBulkheadFullException(Bulkhead.ofDefaults("ep"));
		assertThat(this.classifier.classifyError("ep", open)).isSameAs(open);
		assertThat(this.classifier.classifyError("ep", full)).isSameAs(full);
		assertThat(FailureClassifier.outcomeOf(open)).isEqualTo(Outcome.BREAKER_OPEN);
		assertThat(FailureClassifier.outcomeOf(full)).isEqualTo(Outcome.BULKHEAD_FULL);
		assertThat(this.classifier.isRetryable(open, Duration.ofSeconds(10))).isFalse();
		assertThat(this.classifier.isBreakerFailure(full)).isFalse();
	}

	private Outcome outcomeOfError(Throwable error) {
		return FailureClassifier.outcomeOf(this.classifier.classifyError("ep", error));
	}

	private LlmException rateLimited(String retryAfter) {
		return this.classifier.classifyStatus("ep", 429, headers(HttpHeaders.RETRY_AFTER, retryAfter), null);
	}

	private static HttpHeaders headers(String name, String value) {
		HttpHeaders headers = new HttpHeaders();
		headers.set(name, value);
		return headers;
	}

}
