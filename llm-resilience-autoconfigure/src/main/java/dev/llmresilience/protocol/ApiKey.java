package dev.llmresilience.protocol;

import org.jspecify.annotations.Nullable;

/**
 * An API key that never shows itself: {@link #toString()} is redacted, and only the HTTP client
 * reads the value.
 */
public final class ApiKey {

	private static final ApiKey NONE = new ApiKey(null);

	private final @Nullable String value;

	private ApiKey(@Nullable String value) {
		this.value = value;
	}

	/**
	 * An API key.
	 * @param value the key, or {@code null} or empty for none
	 * @return the key
	 */
	public static ApiKey of(@Nullable String value) {
		return (value == null || value.isBlank()) ? NONE : new ApiKey(value.trim());
	}

	/**
	 * Whether a key is set.
	 * @return true if a key is set
	 */
	public boolean isPresent() {
		return this.value != null;
	}

	/**
	 * The key itself, for the Authorization header and for redacting provider messages only.
	 * @return the key, or {@code null}
	 */
	public @Nullable String reveal() {
		return this.value;
	}

	@Override
	public String toString() {
		return isPresent() ? "ApiKey[redacted]" : "ApiKey[none]";
	}

}
