package dev.llmresilience.shared.redis;

import dev.llmresilience.deferred.DeferredEntry;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Deferred entries as JSON in Redis, readable with {@code redis-cli}: the request (messages, model
 * parameters, extra fields), its state, attempts and timestamps, and the answer once completed.
 */
final class DeferredCodec {

	private final JsonMapper mapper = JsonMapper.builder()
		.disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
		.build();

	String write(DeferredEntry entry) {
		return this.mapper.writeValueAsString(entry);
	}

	DeferredEntry read(String json) {
		return this.mapper.readValue(json, DeferredEntry.class);
	}

}
