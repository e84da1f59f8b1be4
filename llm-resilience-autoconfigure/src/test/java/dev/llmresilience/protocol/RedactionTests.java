package dev.llmresilience.protocol;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * What of a provider's text, or of an error that quotes it, may reach an exception: no key, no
 * header value, at most about a kilobyte, and an unknown error only as a redacted stand-in with its
 * class name and stack trace.
 */
class RedactionTests {

	private static final String KEY = "sk-redaction-0123456789abcdef";

	private static final String HEADER = "org-redaction-987654";

	/** A key in Azure's style (hex), which no key-shaped pattern recognises: only its value can. */
	private static final String HEX_KEY = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";

	@ParameterizedTest(name = "{0}")
	@CsvSource({ "last 8, 24, 32", "first 8, 0, 8", "first 12, 0, 12", "last 20, 12, 32", "whole, 0, 32" })
	void startOrEndOfASecretOfEightCharactersOrMoreIsRedacted(String part, int from, int to) {
		String quoted = HEX_KEY.substring(from, to);
		String shown = Redaction.redact("The key " + quoted + " is not valid.", List.of(HEX_KEY));
		assertThat(shown).isEqualTo("The key [redacted] is not valid.");
	}

	@Test
	void startAndEndRunOnlyAsFarAsTheTextGoesOnAsTheSecretDoes() {
		String shown = Redaction.redact("ends ...0f1e2d3c4b5a6zzz and ...zz5b4c3d2e1f0...", List.of(HEX_KEY));
		assertThat(shown).isEqualTo("ends ...[redacted]zzz and ...zz[redacted]...");
	}

	@Test
	void partsOfEverySecretGivenAreRedacted() {
		String other = "sk-ant-api03-" + "Q".repeat(20) + "tail1234";
		String shown = Redaction.redact("a: " + HEX_KEY.substring(0, 9) + ", b: " + other.substring(other.length() - 8),
				List.of(HEX_KEY, other));
		assertThat(shown).isEqualTo("a: [redacted], b: [redacted]");
	}

	@Test
	void partsShorterThanEightOrFromTheMiddleAreNotRedacted() {
		// what a provider shows of a key is its start or its end; a run from the middle is not looked for
		String middle = HEX_KEY.substring(12, 20);
		String shown = Redaction.redact("seven " + HEX_KEY.substring(25) + ", middle " + middle, List.of(HEX_KEY));
		assertThat(shown).isEqualTo("seven " + HEX_KEY.substring(25) + ", middle " + middle);
	}

	@Test
	void secretShorterThanEightIsRedactedWholeOnly() {
		assertThat(Redaction.redact("code abc123 and abc12", List.of("abc123"))).isEqualTo("code [redacted] and abc12");
	}

	@Test
	void longTextIsCutAfterRedactionAndSaysHowLongItWas() {
		String text = "Bad key " + KEY + " for " + HEADER + " " + "z".repeat(5000);
		String shown = Redaction.redactAndCut(text, List.of(KEY, HEADER));
		assertThat(shown).startsWith("Bad key [redacted] for [redacted] zzz")
			.endsWith("... (cut from " + text.length() + " characters)")
			.hasSizeLessThan(Redaction.MAX_PROVIDER_TEXT + 40);
	}

	@Test
	void secretAcrossTheCutIsStillRedacted() {
		String text = "x".repeat(Redaction.MAX_PROVIDER_TEXT - 5) + " " + KEY + " trailing";
		String shown = Redaction.redactAndCut(text, List.of(KEY));
		assertThat(shown).doesNotContain(KEY.substring(0, 4)).contains("[red");
	}

	@Test
	void aMegabyteWithoutSpacesIsRedactedQuickly() {
		// the key-shaped patterns would take quadratic time over the whole text: hours, not milliseconds
		String text = "a*".repeat(500_000);
		String shown = assertTimeoutPreemptively(java.time.Duration.ofSeconds(10),
				() -> Redaction.redactAndCut(text, List.of(KEY)));
		assertThat(shown).hasSizeLessThan(Redaction.MAX_PROVIDER_TEXT + 40);
	}

}
