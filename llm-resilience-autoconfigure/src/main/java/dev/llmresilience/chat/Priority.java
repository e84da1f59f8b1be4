package dev.llmresilience.chat;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * Whose call a request is: a person waiting for the answer, or work that can yield to people. A
 * {@link #BATCH} call may use at most {@code llm.gateway.batch-share} of an endpoint's capacity;
 * past it, it goes on down the route, then defers if deferrable, else is answered BUSY, while
 * {@link #INTERACTIVE} calls keep the rest.
 */
public enum Priority {

	/** A person waits for the answer: never refused for the batch share (the default). */
	INTERACTIVE,

	/** Work that can wait or go elsewhere: uses at most {@code llm.gateway.batch-share} of an endpoint. */
	BATCH;

	/**
	 * The priority a caller wrote, strictly: {@code interactive} or {@code batch}, in any case;
	 * {@code null} is {@link #INTERACTIVE}.
	 * @param value what the caller wrote, or {@code null} when absent
	 * @param field where it was written, named in the error (e.g. {@code "priority"})
	 * @return the priority
	 * @throws IllegalArgumentException naming the field and the allowed values when it is neither
	 */
	public static Priority parse(@Nullable String value, String field) {
		if (value == null) {
			return INTERACTIVE;
		}
		return switch (value.trim().toLowerCase(Locale.ROOT)) {
			case "interactive" -> INTERACTIVE;
			case "batch" -> BATCH;
			default -> throw new IllegalArgumentException(
					"'" + field + "' must be \"interactive\" or \"batch\" (absent: interactive)");
		};
	}

	/**
	 * The priority as callers write it.
	 * @return {@code interactive} or {@code batch}
	 */
	public String wireName() {
		return name().toLowerCase(Locale.ROOT);
	}

}
