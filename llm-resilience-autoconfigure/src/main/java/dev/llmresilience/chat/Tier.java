package dev.llmresilience.chat;

/**
 * How a response was obtained, from best to worst.
 */
public enum Tier {

	/**
	 * The endpoint the call tried first answered: the route's first, or on a balanced route the one
	 * its balancing chose for this call.
	 */
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
