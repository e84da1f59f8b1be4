package dev.llmresilience.protocol;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
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
 */
final class RetryAfter {

	// The order openai-python and Azure's azure-core RetryPolicy read them in.
	private static final List<String> MILLISECOND_HEADERS = List.of("retry-after-ms", "x-ms-retry-after-ms");

	private RetryAfter() {
	}

	static @Nullable Duration of(HttpHeaders headers, Clock clock) {
		for (String name : MILLISECOND_HEADERS) {
			String millis = headers.getFirst(name);
			if (millis != null) {
				try {
					return Duration.ofMillis(Math.max(0, (long) Double.parseDouble(millis.trim())));
				}
				catch (NumberFormatException ex) {
					// fall through to the next header
				}
			}
		}
		String value = headers.getFirst(HttpHeaders.RETRY_AFTER);
		if (value == null || value.isBlank()) {
			return null;
		}
		try {
			return Duration.ofMillis(Math.max(0, (long) (Double.parseDouble(value.trim()) * 1000)));
		}
		catch (NumberFormatException ex) {
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
	}

}
