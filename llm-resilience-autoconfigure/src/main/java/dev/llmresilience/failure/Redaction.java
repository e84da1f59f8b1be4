package dev.llmresilience.failure;

import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Removes secrets from text that came from a provider before it reaches a log or an exception:
 * the endpoint's own key and header values, and anything shaped like a key, masked or not (OpenAI's
 * 401 message repeats the first and last characters of the key it was sent). Provider text is also
 * cut to {@value #MAX_PROVIDER_TEXT} characters: a provider may send a message of megabytes, which
 * would otherwise be copied into every exception, log line and attempt that mentions it.
 */
public final class Redaction {

	/** The longest provider text (an error's message, code or type) kept, in characters. */
	public static final int MAX_PROVIDER_TEXT = 1024;

	private static final Pattern KEY_LIKE = Pattern.compile("\\b(sk|pk|rk|key)-[A-Za-z0-9_\\-*]{6,}|\\S*\\*{4,}\\S*");

	// Only a token after "Bearer": the word itself is harmless, and so are the short words that
	// follow it in providers' help texts ("Bearer auth", "Bearer YOUR_KEY").
	private static final Pattern BEARER_TOKEN = Pattern.compile("\\b(Bearer\\s+)[A-Za-z0-9._~+/\\-]{12,}=*");

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
	 * Redact a text.
	 * @param text the text, e.g. a provider's error message
	 * @param secrets the endpoint's key and header values
	 * @return the text without secrets
	 */
	public static String redact(String text, Collection<String> secrets) {
		String result = text;
		for (String secret : secrets) {
			if (!secret.isEmpty()) {
				result = result.replace(secret, REDACTED);
			}
		}
		result = BEARER_TOKEN.matcher(result).replaceAll("$1" + REDACTED);
		return KEY_LIKE.matcher(result).replaceAll(REDACTED);
	}

	/**
	 * Redact a text that came from outside and cut it to {@value #MAX_PROVIDER_TEXT} characters. It is
	 * cut (with room for a secret across the cut) before the patterns run, which would otherwise take
	 * time that grows with the square of a long text without spaces.
	 * @param text the text, or {@code null}
	 * @param secrets the endpoint's key and header values
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
	 * @param secrets the endpoint's key and header values
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
	 * @param secrets the endpoint's key and header values
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
