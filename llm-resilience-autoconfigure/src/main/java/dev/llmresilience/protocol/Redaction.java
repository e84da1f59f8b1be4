package dev.llmresilience.protocol;

import java.util.BitSet;
import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Removes secrets from text that came from a provider before it reaches a log or an exception:
 * the configured keys and header values, whole or any part of {@value #SHORTEST_PART} characters or
 * more that starts or ends one, and anything shaped like a key, masked or not (OpenAI's 401 message
 * repeats the first and last characters of the key it was sent). Provider text is also cut to
 * {@value #MAX_PROVIDER_TEXT} characters: a provider may send a message of megabytes, which would
 * otherwise be copied into every exception, log line and attempt that mentions it.
 * <p>
 * It runs where provider text is kept (error messages, codes and types, the model an answer names,
 * which a stream's client asks once per change), not for each token: a few {@code indexOf} scans
 * of at most about {@value #MAX_PROVIDER_TEXT} characters per secret.
 */
public final class Redaction {

	/** The longest provider text (an error's message, code or type) kept, in characters. */
	public static final int MAX_PROVIDER_TEXT = 1024;

	private static final Pattern KEY_LIKE = Pattern.compile("\\b(sk|pk|rk|key)-[A-Za-z0-9_\\-*]{6,}|\\S*\\*{4,}\\S*");

	// Only a token after "Bearer": the word itself is harmless, and so are the short words that
	// follow it in providers' help texts ("Bearer auth", "Bearer YOUR_KEY").
	private static final Pattern BEARER_TOKEN = Pattern.compile("\\b(Bearer\\s+)[A-Za-z0-9._~+/\\-]{12,}=*");

	/**
	 * The shortest start or end of a secret that is redacted on its own; a shorter one is too likely
	 * to be a word, and too short to help a guess.
	 */
	public static final int SHORTEST_PART = 8;

	private static final String REDACTED = "[redacted]";

	// Redaction looks a little past the cut, so that a secret across it is still found whole.
	private static final int LOOK_PAST_CUT = 512;

	private static final int MAX_CAUSES = 8;

	private Redaction() {
	}

	/**
	 * Redact a text.
	 * @param text the text, e.g. a provider's error message
	 * @param secret the endpoint's key, or {@code null}
	 * @return the text without secrets
	 */
	public static String redact(String text, @Nullable String secret) {
		return redact(text, (secret != null) ? List.of(secret) : List.of());
	}

	/**
	 * Redact a text: each secret whole, and each run of {@value #SHORTEST_PART} characters or more
	 * that starts a secret or ends one. A run from a secret's middle is left: what a provider or a
	 * proxy shows of a key is its start or its end (OpenAI's first and last characters, the last four
	 * or eight that dashboards show), and looking for every inner run would take a scan per position.
	 * @param text the text, e.g. a provider's error message
	 * @param secrets the configured keys and header values
	 * @return the text without secrets
	 */
	public static String redact(String text, Collection<String> secrets) {
		BitSet hidden = new BitSet(text.length());
		for (String secret : secrets) {
			if (secret.length() < SHORTEST_PART) {
				hideWhole(text, secret, hidden);
			}
			else {
				hideStarts(text, secret, hidden);
				hideEnds(text, secret, hidden);
			}
		}
		String result = hidden.isEmpty() ? text : replaceHidden(text, hidden);
		result = BEARER_TOKEN.matcher(result).replaceAll("$1" + REDACTED);
		return KEY_LIKE.matcher(result).replaceAll(REDACTED);
	}

	private static void hideWhole(String text, String secret, BitSet hidden) {
		if (secret.isEmpty()) {
			return;
		}
		for (int at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1)) {
			hidden.set(at, at + secret.length());
		}
	}

	// Each place the secret's first characters occur, widened forwards while the text goes on as the secret does
	private static void hideStarts(String text, String secret, BitSet hidden) {
		String start = secret.substring(0, SHORTEST_PART);
		for (int at = text.indexOf(start); at >= 0; at = text.indexOf(start, at + 1)) {
			int length = SHORTEST_PART;
			while (length < secret.length() && at + length < text.length()
					&& text.charAt(at + length) == secret.charAt(length)) {
				length++;
			}
			hidden.set(at, at + length);
		}
	}

	// Each place the secret's last characters occur, widened backwards while the text goes on as the secret does
	private static void hideEnds(String text, String secret, BitSet hidden) {
		String end = secret.substring(secret.length() - SHORTEST_PART);
		for (int at = text.indexOf(end); at >= 0; at = text.indexOf(end, at + 1)) {
			int from = at;
			int index = secret.length() - SHORTEST_PART;
			while (index > 0 && from > 0 && text.charAt(from - 1) == secret.charAt(index - 1)) {
				from--;
				index--;
			}
			hidden.set(from, at + SHORTEST_PART);
		}
	}

	private static String replaceHidden(String text, BitSet hidden) {
		StringBuilder result = new StringBuilder(text.length());
		int shown = 0;
		for (int from = hidden.nextSetBit(0); from >= 0; from = hidden.nextSetBit(shown)) {
			result.append(text, shown, from).append(REDACTED);
			shown = hidden.nextClearBit(from);
		}
		return result.append(text, Math.min(shown, text.length()), text.length()).toString();
	}

	/**
	 * Redact a text that came from outside and cut it to {@value #MAX_PROVIDER_TEXT} characters. It is
	 * cut (with room for a secret across the cut) before the patterns run, which would otherwise take
	 * time that grows with the square of a long text without spaces.
	 * @param text the text, or {@code null}
	 * @param secrets the configured keys and header values
	 * @return the text without secrets, at most {@value #MAX_PROVIDER_TEXT} characters and a note of
	 * what was cut; {@code null} for {@code null}
	 */
	public static @Nullable String redactAndCut(@Nullable String text, Collection<String> secrets) {
		if (text == null) {
			return null;
		}
		int longest = secrets.stream().mapToInt(String::length).max().orElse(0);
		int window = MAX_PROVIDER_TEXT + Math.max(LOOK_PAST_CUT, longest);
		String redacted = redact((text.length() > window) ? text.substring(0, window) : text, secrets);
		if (redacted.length() <= MAX_PROVIDER_TEXT && text.length() <= window) {
			return redacted;
		}
		return redacted.substring(0, Math.min(MAX_PROVIDER_TEXT, redacted.length())) + "... (cut from "
				+ text.length() + " characters)";
	}

	/**
	 * A stand-in for an error whose messages may hold text from outside (a decoder quoting the body it
	 * could not read, say): the same class names and stack traces, down the chain of causes, with
	 * every message redacted and cut.
	 * @param error the error
	 * @param secrets the configured keys and header values
	 * @return the stand-in
	 */
	public static RedactedException sanitized(Throwable error, Collection<String> secrets) {
		return sanitized(error, secrets, 0);
	}

	private static RedactedException sanitized(Throwable error, Collection<String> secrets, int depth) {
		Throwable cause = error.getCause();
		RedactedException copy = new RedactedException(typeOf(error), redactAndCut(error.getMessage(), secrets),
				(cause != null && cause != error && depth < MAX_CAUSES) ? sanitized(cause, secrets, depth + 1) : null);
		copy.setStackTrace(error.getStackTrace());
		return copy;
	}

	/**
	 * An error's class and message, redacted and cut, for an exception's message.
	 * @param error the error
	 * @param secrets the configured keys and header values
	 * @return e.g. {@code PrematureCloseException (Connection prematurely closed BEFORE response)}
	 */
	public static String describe(Throwable error, Collection<String> secrets) {
		String message = redactAndCut(error.getMessage(), secrets);
		String type = typeOf(error);
		return type.substring(type.lastIndexOf('.') + 1) + ((message != null) ? " (" + message + ")" : "");
	}

	private static String typeOf(Throwable error) {
		return (error instanceof RedactedException redacted) ? redacted.type() : error.getClass().getName();
	}

}
