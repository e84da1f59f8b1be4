package dev.llmresilience.sample;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.stereotype.Component;

/**
 * The mode, the cut-off point and the request count of every simulated provider, whatever protocol
 * it is called in.
 */
@Component
class SimulatedModes {

	private static final int DEFAULT_CUT_AFTER = 3;

	private final Map<String, SimulatedMode> modes = new ConcurrentHashMap<>();

	private final Map<String, AtomicLong> requests = new ConcurrentHashMap<>();

	private final Map<String, Integer> cutAfter = new ConcurrentHashMap<>();

	/** Count a request to a provider and tell its mode. */
	SimulatedMode request(String provider) {
		this.requests.computeIfAbsent(provider, (name) -> new AtomicLong()).incrementAndGet();
		return mode(provider);
	}

	SimulatedMode mode(String provider) {
		return this.modes.getOrDefault(provider, SimulatedMode.OK);
	}

	int cutAfter(String provider) {
		return this.cutAfter.getOrDefault(provider, DEFAULT_CUT_AFTER);
	}

	void set(String provider, SimulatedMode mode, Integer after) {
		this.modes.put(provider, mode);
		this.cutAfter.put(provider, (after != null) ? after : DEFAULT_CUT_AFTER);
	}

	Map<String, Object> state(String provider) {
		return Map.of("provider", provider, "mode", mode(provider).wireName(), "after", cutAfter(provider), "requests",
				this.requests.getOrDefault(provider, new AtomicLong()).get());
	}

	/** The text of the conversation's last user message. */
	static String lastUserMessage(Map<String, Object> request) {
		List<?> messages = (request.get("messages") instanceof List<?> list) ? list : List.of();
		for (int i = messages.size() - 1; i >= 0; i--) {
			if (messages.get(i) instanceof Map<?, ?> message && "user".equals(message.get("role"))) {
				return String.valueOf(message.get("content"));
			}
		}
		return "";
	}

	/** A conversation that ends with an assistant message asks to continue it (a resumed stream). */
	static String assistantPrefix(Map<String, Object> request) {
		List<?> messages = (request.get("messages") instanceof List<?> list) ? list : List.of();
		if (!messages.isEmpty() && messages.get(messages.size() - 1) instanceof Map<?, ?> last
				&& "assistant".equals(last.get("role"))) {
			return String.valueOf(last.get("content"));
		}
		return "";
	}

}
