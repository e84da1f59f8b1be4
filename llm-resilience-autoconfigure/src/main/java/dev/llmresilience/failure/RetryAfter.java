package dev.llmresilience.failure;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * Reads the wait a provider asked for: {@code retry-after-ms} (OpenAI), else {@code Retry-After} in
 * seconds or as an HTTP date. A value that is not a number (nor a date) is no wait at all.
 */
final class RetryAfter {

	private RetryAfter() {
	}

	static @Nullable Duration read(HttpHeaders headers, Clock clock) {
		String millis = headers.getFirst("retry-after-ms");
		if (millis != null) {
			Double value = number(millis);
			if (value != null) {
				return Duration.ofMillis(Math.max(0, value.longValue()));
			}
		}
		String value = headers.getFirst(HttpHeaders.RETRY_AFTER);
		if (value == null || value.isBlank()) {
			return null;
		}
		Double seconds = number(value);
		if (seconds != null) {
			return Duration.ofMillis(Math.max(0, (long) (seconds * 1000)));
		}
		try {
			Instant at = ZonedDateTime.parse(value.trim(), DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.US))
				.toInstant();
			Duration wait = Duration.between(clock.instant(), at);
			return wait.isNegative() ? Duration.ZERO : wait;
		}
		catch (DateTimeParseException notADate) {
			return null;
		}
	}

	// "NaN" parses, and would be read as no wait at all.
	private static @Nullable Double number(String text) {
		try {
			double value = Double.parseDouble(text.trim());
			return Double.isNaN(value) ? null : value;
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

}
