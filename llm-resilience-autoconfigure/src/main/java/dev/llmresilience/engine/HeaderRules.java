package dev.llmresilience.engine;

import java.util.Locale;
import java.util.Map;
import java.util.Set;

import dev.llmresilience.autoconfigure.LlmConfigurationException;

/**
 * Checks an endpoint's configured request headers at start-up, so that a bad one stops the
 * application with its property named instead of failing every call (Netty refuses a bad header
 * only when the request is sent, which the breaker would count against the provider): a name must
 * be an HTTP token (RFC 9110), a value must hold no control character (CR and LF would split the
 * request), and a header that the HTTP client or the starter sets itself may not be overridden.
 * Messages name the header, never its value: values are treated as secrets.
 */
final class HeaderRules {

	// Framing and connection headers belong to the HTTP client; a second value would be request smuggling.
	private static final Set<String> TRANSPORT = Set.of("host", "content-length", "transfer-encoding", "connection",
			"keep-alive", "upgrade", "te", "trailer", "proxy-connection", "expect");

	// Set on every request by the client: the configured value would be dropped without a word.
	private static final Set<String> SET_BY_THE_CLIENT = Set.of("content-type", "accept");

	private HeaderRules() {
	}

	/**
	 * Check the headers of one endpoint.
	 * @param property the property they are bound from, e.g. {@code llm.endpoints.gpt-4o.headers}
	 * @param headers the headers
	 * @param hasApiKey whether the endpoint has an api-key, which is sent as {@code Authorization}
	 * @return the headers
	 * @throws LlmConfigurationException naming the first bad header
	 */
	static Map<String, String> check(String property, Map<String, String> headers, boolean hasApiKey) {
		headers.forEach((name, value) -> {
			String key = property + "." + name;
			if (!isToken(name)) {
				throw new LlmConfigurationException(key, "is not a valid HTTP header name",
						"Use only letters, digits and !#$%&'*+-.^_`|~ in a header name, e.g. OpenAI-Organization.");
			}
			String lower = name.toLowerCase(Locale.ROOT);
			if (TRANSPORT.contains(lower)) {
				throw new LlmConfigurationException(key, "is a header the HTTP client sets itself",
						"Remove it: the connection's framing is not configurable.");
			}
			if (SET_BY_THE_CLIENT.contains(lower)) {
				throw new LlmConfigurationException(key, "is a header the starter sets on every request",
						"Remove it: requests are always JSON, and answers are read as JSON or server-sent events.");
			}
			if (lower.equals("authorization") && hasApiKey) {
				throw new LlmConfigurationException(key, "would be replaced by the api-key's Authorization: Bearer header",
						"Set either api-key or this header, not both.");
			}
			if (value != null && !isFieldValue(value)) {
				throw new LlmConfigurationException(key, "has a value with a control character (such as CR or LF) "
						+ "or a character beyond Latin-1", "Give the value on one line, in printable characters "
								+ "(the value itself is not shown here, since header values may be secrets).");
			}
		});
		return headers;
	}

	// RFC 9110 5.6.2: token = 1*tchar
	private static boolean isToken(String name) {
		if (name.isEmpty()) {
			return false;
		}
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			boolean tchar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
					|| "!#$%&'*+-.^_`|~".indexOf(c) >= 0;
			if (!tchar) {
				return false;
			}
		}
		return true;
	}

	// RFC 9110 5.5: field-value = *( VCHAR / obs-text / SP / HTAB ); obs-text is 0x80-0xFF
	private static boolean isFieldValue(String value) {
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			boolean allowed = c == '\t' || (c >= 0x20 && c <= 0x7E) || (c >= 0x80 && c <= 0xFF);
			if (!allowed) {
				return false;
			}
		}
		return true;
	}

}
