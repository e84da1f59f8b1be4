package dev.llmresilience.openaiapi;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The keys clients of the OpenAI-compatible API authenticate with ({@code Authorization: Bearer}).
 * Only their SHA-256 digests are held, and a presented key is compared with every one of them in
 * time that does not depend on where, or whether, it differs: the time of an answer tells nothing
 * of a key. {@link #toString()} shows none.
 */
final class ClientKeys {

	private static final String BEARER = "bearer ";

	private final List<byte[]> digests;

	/**
	 * Create the keys.
	 * @param keys the accepted keys, at least one, none blank
	 */
	public ClientKeys(List<String> keys) {
		if (keys.isEmpty() || keys.stream().anyMatch((key) -> key == null || key.isBlank())) {
			throw new IllegalArgumentException("At least one key, and no blank one, is needed");
		}
		this.digests = keys.stream().map((key) -> digest(key.trim())).toList();
	}

	/**
	 * Whether an {@code Authorization} header carries one of the keys.
	 * @param authorization the header's value, or {@code null} when absent
	 * @return true for {@code Bearer <one of the keys>}
	 */
	public boolean accepts(@Nullable String authorization) {
		if (authorization == null || authorization.length() <= BEARER.length()
				|| !authorization.substring(0, BEARER.length()).toLowerCase(Locale.ROOT).equals(BEARER)) {
			return false;
		}
		byte[] presented = digest(authorization.substring(BEARER.length()).trim());
		boolean match = false;
		for (byte[] digest : this.digests) {
			// no short cut: every key is compared, each in constant time
			match |= MessageDigest.isEqual(digest, presented);
		}
		return match;
	}

	private static byte[] digest(String key) {
		try {
			return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
		}
	}

	@Override
	public String toString() {
		return "ClientKeys[" + this.digests.size() + " keys, redacted]";
	}

}
