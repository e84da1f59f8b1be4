package dev.llmresilience.sample;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Component;

/**
 * The mode, the cut-off point and the request count of every simulated provider, whatever protocol
 * it is called in.
 * <p>
 * Anyone who reaches the simulator can switch it, so the sample listens on loopback only (see
 * {@code application.yml}). State is kept for at most {@value #MAX_PROVIDERS} provider names of at
 * most 32 letters, digits, {@code -} or {@code _} ({@link #admits}), and a stream mode's
 * {@code after} is 0 to {@value #MAX_AFTER} ({@link #after}): a request outside those is a 400, so
 * that no request can grow the simulator's memory or break its streams.
 */
@Component
class SimulatedModes {

	static final int MAX_PROVIDERS = 16;

	static final int MAX_AFTER = 1000;

	private static final int DEFAULT_CUT_AFTER = 3;

	private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,32}");

	private final Set<String> providers = ConcurrentHashMap.newKeySet();

	private final Map<String, SimulatedMode> modes = new ConcurrentHashMap<>();

	private final Map<String, AtomicLong> requests = new ConcurrentHashMap<>();

	private final Map<String, Integer> cutAfter = new ConcurrentHashMap<>();

	/**
	 * Whether the simulator keeps state for a provider: a valid name, and one of the first
	 * {@value #MAX_PROVIDERS}.
	 * @param provider the provider's name
	 * @return false when the request is to be refused
	 */
	boolean admits(String provider) {
		if (!NAME.matcher(provider).matches()) {
			return false;
		}
		if (this.providers.contains(provider)) {
			return true;
		}
		synchronized (this.providers) {
			return this.providers.size() < MAX_PROVIDERS && this.providers.add(provider)
					|| this.providers.contains(provider);
		}
	}

	/**
	 * The answer to a request for a provider the simulator does not keep.
	 * @return a 400 that says why
	 */
	static ResponseEntity<Map<String, Object>> refused() {
		return ResponseEntity.badRequest()
			.body(Map.of("error", "The simulator keeps at most " + MAX_PROVIDERS + " providers, named with at most "
					+ "32 letters, digits, - or _"));
	}

	/**
	 * A stream mode's cut-off point as a request gives it.
	 * @param value the request's {@code after}, or {@code null} for the default
	 * @return the cut-off point, or {@code null} when it is not a whole number from 0 to {@value #MAX_AFTER}
	 */
	static @Nullable Integer after(@Nullable Object value) {
		if (value == null) {
			return DEFAULT_CUT_AFTER;
		}
		try {
			int after = Integer.parseInt(String.valueOf(value).trim());
			return (after >= 0 && after <= MAX_AFTER) ? after : null;
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

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
