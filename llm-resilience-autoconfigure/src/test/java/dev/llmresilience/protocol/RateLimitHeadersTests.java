package dev.llmresilience.protocol;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Map;

import dev.llmresilience.protocol.ClientSettings.ProviderLimits;
import dev.llmresilience.protocol.ClientSettings.ProviderLimits.Window;
import dev.llmresilience.support.Answers;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.HttpHeaders;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the providers' rate-limit headers say, read as their documentation spells them: OpenAI's
 * from a recorded answer (fixture), its Go durations, Anthropic's RFC 3339 resets; values that
 * cannot be read are no values.
 */
class RateLimitHeadersTests {

	private static final Clock CLOCK = Clock.fixed(Instant.parse("2025-08-21T12:40:00Z"), ZoneOffset.UTC);

	private final UpstreamFailures failures = new UpstreamFailures(CLOCK);

	@Test
	void openAiHeadersOfARecordedAnswer() {
		HttpHeaders headers = new HttpHeaders();
		@SuppressWarnings("unchecked")
		Map<String, String> recorded = (Map<String, String>) JsonMapper.builder()
			.build()
			.readValue(Answers.fixture("openai/dotnet-headers-200-chat.derived.json"), Map.class)
			.get("ResponseHeaders");
		recorded.forEach(headers::add);
		ProviderLimits limits = this.failures.rateLimits("gpt", headers);
		assertThat(limits).isEqualTo(new ProviderLimits(new Window(30000, 29999, Duration.ofMillis(2)),
				new Window(150000000, 149999992, Duration.ZERO), null, null));
	}

	@ParameterizedTest
	@CsvSource({ "1s, PT1S", "6m0s, PT6M", "20ms, PT0.02S", "2ms, PT0.002S", "0s, PT0S", "1h2m3.5s, PT1H2M3.5S",
			"1.5s, PT1.5S", "250us, PT0.00025S" })
	void openAiResetsAreGoDurations(String value, Duration expected) {
		HttpHeaders headers = new HttpHeaders();
		headers.add("x-ratelimit-limit-requests", "60");
		headers.add("x-ratelimit-remaining-requests", "59");
		headers.add("x-ratelimit-reset-requests", value);
		assertThat(this.failures.rateLimits("gpt", headers).requests()).isEqualTo(new Window(60, 59, expected));
	}

	@Test
	void anthropicHeadersWithRfc3339Resets() {
		HttpHeaders headers = new HttpHeaders();
		anthropic(headers, "requests", "1000", "999", "2025-08-21T12:40:59Z");
		anthropic(headers, "tokens", "96000", "96000", "2025-08-21T12:40:59Z");
		anthropic(headers, "input-tokens", "80000", "80000", "2025-08-21T12:40:59Z");
		anthropic(headers, "output-tokens", "16000", "15000", "2025-08-21T12:41:00Z");
		headers.add("anthropic-ratelimit-output-tokens-reset-ignored", "x");
		ProviderLimits limits = this.failures.rateLimits("claude", headers);
		assertThat(limits).isEqualTo(new ProviderLimits(new Window(1000, 999, Duration.ofSeconds(59)),
				new Window(96000, 96000, Duration.ofSeconds(59)), new Window(80000, 80000, Duration.ofSeconds(59)),
				new Window(16000, 15000, Duration.ofSeconds(60))));
	}

	@Test
	void aResetAlreadyPastIsAWindowWholeNow() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("anthropic-ratelimit-requests-remaining", "0");
		headers.add("anthropic-ratelimit-requests-reset", "2025-08-21T12:39:00+00:00");
		assertThat(this.failures.rateLimits("claude", headers).requests()).isEqualTo(new Window(-1, 0, Duration.ZERO));
	}

	@Test
	void valuesThatCannotBeReadAreNoValues() {
		HttpHeaders headers = new HttpHeaders();
		headers.add("x-ratelimit-limit-requests", "-5");
		headers.add("x-ratelimit-remaining-requests", "12");
		headers.add("x-ratelimit-reset-requests", "6 minutes");
		headers.add("x-ratelimit-limit-tokens", "lots");
		headers.add("x-ratelimit-remaining-tokens", "1e9");
		ProviderLimits limits = this.failures.rateLimits("gpt", headers);
		assertThat(limits.requests()).isEqualTo(new Window(-1, 12, null));
		assertThat(limits.tokens()).as("nothing readable").isNull();
	}

	// Anthropic's three headers of one limit: anthropic-ratelimit-{kind}-{limit,remaining,reset}
	private static void anthropic(HttpHeaders headers, String kind, String limit, String remaining, String reset) {
		headers.add("anthropic-ratelimit-" + kind + "-limit", limit);
		headers.add("anthropic-ratelimit-" + kind + "-remaining", remaining);
		headers.add("anthropic-ratelimit-" + kind + "-reset", reset);
	}

	@Test
	void noHeadersNoLimits() {
		assertThat(this.failures.rateLimits("gpt", new HttpHeaders())).isNull();
	}

}
