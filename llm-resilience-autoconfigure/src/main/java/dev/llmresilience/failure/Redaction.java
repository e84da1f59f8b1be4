package dev.llmresilience.failure;

import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Removes secrets from text that came from a provider before it reaches a log or an exception:
 * the endpoint's own key and header values, and anything shaped like a key, masked or not (OpenAI's
 * 401 message repeats the first and last characters of the key it was sent).
 */
public final class Redaction {

	private static final Pattern KEY_LIKE = Pattern.compile("\\b(sk|pk|rk|key)-[A-Za-z0-9_\\-*]{6,}|\\S*\\*{4,}\\S*");

	// Only a token after "Bearer": the word itself is harmless, and so are the short words that
	// follow it in providers' help texts ("Bearer auth", "Bearer YOUR_KEY").
	private static final Pattern BEARER_TOKEN = Pattern.compile("\\b(Bearer\\s+)[A-Za-z0-9._~+/\\-]{12,}=*");

	private static final String REDACTED = "[redacted]";

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

}
