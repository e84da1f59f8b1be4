package dev.llmresilience.protocol;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmresilience.protocol.ClientSettings.ProviderLimits;
import dev.llmresilience.protocol.ClientSettings.ProviderLimits.Window;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;

/**
 * The rate limits a provider announces in its response headers, as its documentation spells them:
 * OpenAI and Azure OpenAI {@code x-ratelimit-{limit,remaining,reset}-{requests,tokens}}, the resets
 * Go durations ({@code 1s}, {@code 6m0s}, {@code 20ms}); Anthropic
 * {@code anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}},
 * the resets RFC 3339 times. A value that cannot be read (not a count of 0 or more, not a duration
 * or a time) is ignored as if not sent, and logged at WARN once per endpoint and header, so that a
 * provider that always sends it does not flood the log; the value is logged, never a key.
 */
final class RateLimitHeaders {

	private static final Log logger = LogFactory.getLog(RateLimitHeaders.class);

	private static final Pattern GO_DURATION_PART = Pattern.compile("(\\d+(?:\\.\\d+)?)(h|ms|m|s|us|\u00b5s|ns)");

	private final Clock clock;

	private final Set<String> warned = ConcurrentHashMap.newKeySet();

	RateLimitHeaders(Clock clock) {
		this.clock = clock;
	}

	@Nullable ProviderLimits read(String endpoint, HttpHeaders headers) {
		Window requests = openAi(endpoint, headers, "requests");
		Window tokens = openAi(endpoint, headers, "tokens");
		Window inputTokens = null;
		Window outputTokens = null;
		if (requests == null && tokens == null) {
			requests = anthropic(endpoint, headers, "requests");
			tokens = anthropic(endpoint, headers, "tokens");
			inputTokens = anthropic(endpoint, headers, "input-tokens");
			outputTokens = anthropic(endpoint, headers, "output-tokens");
		}
		if (requests == null && tokens == null && inputTokens == null && outputTokens == null) {
			return null;
		}
		return new ProviderLimits(requests, tokens, inputTokens, outputTokens);
	}

	private @Nullable Window openAi(String endpoint, HttpHeaders headers, String what) {
		String limit = "x-ratelimit-limit-" + what;
		String remaining = "x-ratelimit-remaining-" + what;
		String reset = "x-ratelimit-reset-" + what;
		if (!headers.containsHeader(limit) && !headers.containsHeader(remaining)) {
			return null;
		}
		return window(count(endpoint, limit, headers.getFirst(limit)),
				count(endpoint, remaining, headers.getFirst(remaining)),
				goDuration(endpoint, reset, headers.getFirst(reset)));
	}

	private @Nullable Window anthropic(String endpoint, HttpHeaders headers, String what) {
		String prefix = "anthropic-ratelimit-" + what + "-";
		if (!headers.containsHeader(prefix + "limit") && !headers.containsHeader(prefix + "remaining")) {
			return null;
		}
		return window(count(endpoint, prefix + "limit", headers.getFirst(prefix + "limit")),
				count(endpoint, prefix + "remaining", headers.getFirst(prefix + "remaining")),
				time(endpoint, prefix + "reset", headers.getFirst(prefix + "reset")));
	}

	private static @Nullable Window window(long limit, long remaining, @Nullable Duration reset) {
		return (limit < 0 && remaining < 0) ? null : new Window(limit, remaining, reset);
	}

	private long count(String endpoint, String header, @Nullable String value) {
		if (value == null) {
			return -1;
		}
		try {
			long count = Long.parseLong(value.trim());
			if (count >= 0) {
				return count;
			}
		}
		catch (NumberFormatException ex) {
			// warned below
		}
		warn(endpoint, header, value, "a count of 0 or more");
		return -1;
	}

	// A Go duration, as OpenAI's documentation shows them: 1s, 6m0s, 20ms, 1h2m3.5s.
	private @Nullable Duration goDuration(String endpoint, String header, @Nullable String value) {
		if (value == null) {
			return null;
		}
		String text = value.trim();
		Matcher part = GO_DURATION_PART.matcher(text);
		double nanos = 0;
		int end = 0;
		while (part.find() && part.start() == end) {
			nanos += Double.parseDouble(part.group(1)) * nanosPer(part.group(2));
			end = part.end();
		}
		if (end == 0 || end != text.length() || nanos >= Long.MAX_VALUE) {
			warn(endpoint, header, value, "a duration such as 1s, 6m0s or 20ms");
			return null;
		}
		return Duration.ofNanos((long) Math.ceil(nanos));
	}

	private static double nanosPer(String unit) {
		return switch (unit) {
			case "h" -> 3_600e9;
			case "m" -> 60e9;
			case "s" -> 1e9;
			case "ms" -> 1e6;
			case "ns" -> 1;
			default -> 1e3;
		};
	}

	// An RFC 3339 time, as Anthropic sends them; one already past is a window whole again now.
	private @Nullable Duration time(String endpoint, String header, @Nullable String value) {
		if (value == null) {
			return null;
		}
		try {
			Instant at = OffsetDateTime.parse(value.trim()).toInstant();
			Duration wait = Duration.between(this.clock.instant(), at);
			return wait.isNegative() ? Duration.ZERO : wait;
		}
		catch (DateTimeParseException | ArithmeticException ex) {
			warn(endpoint, header, value, "an RFC 3339 time such as 2025-08-21T12:40:59Z");
			return null;
		}
	}

	private void warn(String endpoint, String header, String value, String expected) {
		if (this.warned.add(endpoint + '\n' + header)) {
			String shown = (value.length() > 40) ? value.substring(0, 40) + "..." : value;
			logger.warn("Endpoint '" + endpoint + "' sent " + header + ": '" + shown.replaceAll("[\\p{Cntrl}]", "?")
					+ "', which is not " + expected + ": the value is ignored. Only the first such value of this "
					+ "header from this endpoint is logged.");
		}
	}

}
