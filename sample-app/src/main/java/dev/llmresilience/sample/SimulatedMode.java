package dev.llmresilience.sample;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * How a simulated provider behaves, set per provider name with {@code POST /sim/{provider}/mode}.
 * Each protocol the simulator speaks shows a mode in its own terms (an OpenAI 500 is Anthropic's
 * 529 {@code overloaded_error}).
 */
enum SimulatedMode {

	OK, ERROR, TIMEOUT, RATE_LIMIT, EMPTY, CONTENT_FILTER, SLOW,

	/** Streams only: the stream stops after {@code after} content chunks, with no finish reason or end. */
	STREAM_CUT,

	/** Streams only: the stream falls silent after {@code after} content chunks. */
	STREAM_STALL,

	/** Streams only: the role chunk at once, the first content after 5 s. */
	SLOW_FIRST_TOKEN,

	/** Streams only: an error event (Anthropic's {@code overloaded_error}) after {@code after} content chunks. */
	STREAM_ERROR;

	/**
	 * Whether a streamed request is answered with events in this mode; else it gets the same error
	 * (or silence) as a plain request.
	 */
	boolean streams() {
		return this != ERROR && this != TIMEOUT && this != RATE_LIMIT;
	}

	String wireName() {
		return name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

	static @Nullable SimulatedMode from(@Nullable String name) {
		return Arrays.stream(values()).filter((mode) -> mode.wireName().equals(name)).findFirst().orElse(null);
	}

	static List<String> names() {
		return Arrays.stream(values()).map(SimulatedMode::wireName).toList();
	}

}
