package dev.llmresilience.engine;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.llmresilience.chat.ChatRequest;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The cache key of a request: a SHA-256 of its route, cache scope, messages and model parameters
 * (temperature, max tokens, tools and tool choice, extra fields, with map keys sorted), so that only the same question
 * with the same settings, asked within the same scope (tenant, user), gets the same answer. The
 * prompt itself is not kept in the key.
 */
final class RequestKeys {

	private static final JsonMapper mapper = JsonMapper.builder()
		.enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
		.build();

	private RequestKeys() {
	}

	/**
	 * The key of a request on a route.
	 * @param route the route
	 * @param request the request
	 * @return the key, 64 hex digits
	 */
	public static String of(String route, ChatRequest request) {
		Map<String, Object> canonical = new LinkedHashMap<>();
		canonical.put("route", route);
		canonical.put("scope", request.cacheScope());
		canonical.put("messages", request.messages());
		canonical.put("temperature", request.temperature());
		canonical.put("maxTokens", request.maxTokens());
		canonical.put("extra", request.extra());
		canonical.put("tools", request.tools());
		canonical.put("toolChoice", request.toolChoice());
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(mapper.writeValueAsBytes(canonical));
			return HexFormat.of().formatHex(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is missing from this JVM", ex);
		}
	}


}
