package dev.llmresilience.chat;

/**
 * How a response was obtained, from best to worst.
 */
public enum Tier {

	/** The first endpoint of the route answered. */
	PRIMARY,

	/** Another endpoint of the route answered. */
	FALLBACK,

	/** Nothing live could answer; an earlier answer to the same request was returned. */
	CACHED,

	/** Nothing live could answer; the request was queued and will complete in the background. */
	DEFERRED,

	/** Nothing could answer now; the content is the configured busy message. */
	BUSY

}
