package dev.llmresilience.protocol;

import java.io.IOException;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Redaction at its edges: a text of exactly the kept length is kept whole, one that redaction brings
 * under it is not marked as cut, a stand-in keeps the class names, messages (redacted) and stack
 * traces of the chain of causes up to its limit, and an error is described by its simple class name.
 */
class RedactionEdgeTests {

	private static final String KEY = "sk-edge-0123456789abcdef";

	@Test
	void textOfExactlyTheKeptLengthIsKeptWhole() {
		String text = "x".repeat(Redaction.MAX_PROVIDER_TEXT);
		assertThat(Redaction.redactAndCut(text, List.of())).isEqualTo(text);
		String longer = text + "y";
		assertThat(Redaction.redactAndCut(longer, List.of())).isEqualTo(text + "... (cut from 1025 characters)");
	}

	@Test
	void textThatRedactionBringsUnderTheKeptLengthIsNotMarkedAsCut() {
		// a long secret widens the window looked at to the kept length plus the secret's length; a text
		// of exactly that length, its secrets replaced, fits
		// (two copies apart: copies side by side are one run that starts with the secret, redacted as one)
		String secret = "Z".repeat(600);
		String text = secret + " " + secret + "x".repeat(Redaction.MAX_PROVIDER_TEXT - secret.length() - 1);
		assertThat(text).hasSize(Redaction.MAX_PROVIDER_TEXT + secret.length());
		assertThat(Redaction.redactAndCut(text, List.of(secret)))
			.isEqualTo("[redacted] [redacted]" + "x".repeat(Redaction.MAX_PROVIDER_TEXT - secret.length() - 1));
	}

	@Test
	void noTextStaysNoText() {
		assertThat(Redaction.redactAndCut(null, List.of(KEY))).isNull();
	}

	@Test
	void singleSecretIsRedactedAndNoSecretRedactsOnlyKeyShapes() {
		assertThat(Redaction.redact("key is org-secret-value here", "org-secret-value")).isEqualTo("key is [redacted] here");
		assertThat(Redaction.redact("plain words stay", (String) null)).isEqualTo("plain words stay");
		assertThat(Redaction.redact("leaked " + KEY, (String) null)).isEqualTo("leaked [redacted]");
	}

	@Test
	void standInKeepsClassNamesRedactedMessagesAndStackTracesDownTheChain() {
		IOException inner = new IOException("inner quotes " + KEY);
		IllegalStateException outer = new IllegalStateException("outer quotes " + KEY, inner);
		RedactedException copy = Redaction.sanitized(outer, List.of(KEY));
		assertThat(copy.type()).isEqualTo("java.lang.IllegalStateException");
		assertThat(copy).hasMessage("outer quotes [redacted]");
		assertThat(copy.getStackTrace()).isEqualTo(outer.getStackTrace());
		assertThat(copy.toString()).isEqualTo("java.lang.IllegalStateException: outer quotes [redacted]");
		RedactedException cause = (RedactedException) copy.getCause();
		assertThat(cause.type()).isEqualTo("java.io.IOException");
		assertThat(cause).hasMessage("inner quotes [redacted]");
		assertThat(cause.getStackTrace()).isEqualTo(inner.getStackTrace());
		assertThat(cause.getCause()).isNull();
		assertThat(Redaction.sanitized(new IllegalStateException(), List.of()).toString())
			.isEqualTo("java.lang.IllegalStateException");
	}

	@Test
	void standInFollowsAtMostEightCauses() {
		Throwable error = new IllegalStateException("level 12");
		for (int level = 11; level >= 0; level--) {
			error = new IllegalStateException("level " + level, error);
		}
		int depth = 0;
		for (Throwable copy = Redaction.sanitized(error, List.of()); copy != null; copy = copy.getCause()) {
			assertThat(copy).hasMessage("level " + depth);
			depth++;
		}
		assertThat(depth).as("the error and eight causes").isEqualTo(9);
	}

	@Test
	void errorIsDescribedByItsSimpleClassNameAndItsRedactedMessage() {
		assertThat(Redaction.describe(new IllegalStateException("bad " + KEY), List.of(KEY)))
			.isEqualTo("IllegalStateException (bad [redacted])");
		assertThat(Redaction.describe(new IllegalStateException(), List.of())).isEqualTo("IllegalStateException");
		RedactedException standIn = Redaction.sanitized(new IOException("closed"), List.of());
		assertThat(Redaction.describe(standIn, List.of())).as("a stand-in by the class it stands for")
			.isEqualTo("IOException (closed)");
	}

}
