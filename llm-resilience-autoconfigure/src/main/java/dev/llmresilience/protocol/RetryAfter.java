package dev.llmresilience.protocol;

import java.time.Clock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * The wait a provider asked for in its response headers, read as the official SDKs read them:
 * {@code retry-after-ms} (OpenAI, Azure OpenAI), else {@code x-ms-retry-after-ms} (Azure), else
 * {@code Retry-After} (every provider, Anthropic included) in seconds or as an HTTP date.
 * <p>
 * Only a wait still to come counts: a value that is zero or negative, not a finite number, too large
 * for a {@link Duration} of milliseconds, or a date that is not in the future is read as no value,
 * and the next header is tried. A header that asks for no wait would otherwise replace the
 * endpoint's backoff with none, and retries would follow each other back to back.
 */
final class RetryAfter {

	// The order openai-python and Azure's azure-core RetryPolicy read them in.
	private static final List<String> MILLISECOND_HEADERS = List.of("retry-after-ms", "x-ms-retry-after-ms");

	private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.US);

	private RetryAfter() {
	}

	static @Nullable Duration of(HttpHeaders headers, Clock clock) {
		for (String name : MILLISECOND_HEADERS) {
			Duration wait = millis(headers.getFirst(name), 1);
			if (wait != null) {
				return wait;
			}
		}
		String value = headers.getFirst(HttpHeaders.RETRY_AFTER);
		if (value == null || value.isBlank()) {
			return null;
		}
		Duration seconds = millis(value, 1000);
		return (seconds != null) ? seconds : date(value.trim(), clock);
	}

	private static @Nullable Duration millis(@Nullable String value, double millisPerUnit) {
		if (value == null) {
			return null;
		}
		double millis;
		try {
			millis = Math.ceil(Double.parseDouble(value.trim()) * millisPerUnit);
		}
		catch (NumberFormatException ex) {
			return null;
		}
		// NaN fails both comparisons; below Long.MAX_VALUE as a double (2^63) the cast cannot overflow
		return (millis > 0 && millis < Long.MAX_VALUE) ? Duration.ofMillis((long) millis) : null;
	}

	private static @Nullable Duration date(String value, Clock clock) {
		try {
			Duration wait = Duration.between(clock.instant(), ZonedDateTime.parse(value, HTTP_DATE).toInstant());
			return (wait.compareTo(Duration.ZERO) > 0) ? wait : null;
		}
		catch (DateTimeParseException | ArithmeticException notADate) {
			return null;
		}
	}

}
