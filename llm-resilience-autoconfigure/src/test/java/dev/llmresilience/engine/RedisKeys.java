package dev.llmresilience.engine;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The deferred queue's key names as a test reads them from Redis, under the default prefix of an
 * application without a name: the stream, and each entry's hash named by the SHA-256 of its ticket
 * (base64url), worked out here on their own so that a change of scheme fails the tests.
 */
final class RedisKeys {

	static final String PREFIX = "llm:application:";

	static final String STREAM = PREFIX + "deferred";

	static final String GROUP = "llm-deferred";

	private RedisKeys() {
	}

	static String digest(String ticket) {
		try {
			return Base64.getUrlEncoder()
				.withoutPadding()
				.encodeToString(MessageDigest.getInstance("SHA-256").digest(ticket.getBytes(StandardCharsets.UTF_8)));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	static String entry(String ticket) {
		return STREAM + ":" + digest(ticket);
	}

}
