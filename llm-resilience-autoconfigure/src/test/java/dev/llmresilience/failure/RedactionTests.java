package dev.llmresilience.failure;

import java.util.List;

import org.junit.jupiter.api.Test;

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
