package dev.llmresilience.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * A deferred request's name in Redis: the SHA-256 of its ticket, base64url. A ticket is a bearer
 * token for the answer, and key names are what {@code KEYS}, {@code SCAN}, {@code MONITOR}, slow
 * logs and key-space notifications show to whoever may list keys; a digest names the entry without
 * letting its reader fetch the answer through the application.
 */
final class TicketDigest {

	private TicketDigest() {
	}

	static String of(String ticket) {
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(ticket.getBytes(StandardCharsets.UTF_8));
			return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("Every Java platform has SHA-256", ex);
		}
	}

}
