package dev.llmresilience.spi;

import java.io.Serializable;
import java.time.Instant;
import java.util.Optional;

import dev.llmresilience.chat.ChatResponse;

/**
 * Last good answers, by request key, for the CACHED tier.
 */
public interface FallbackCache {

	/**
	 * Remember a live answer.
	 * @param key the request's key (see {@code RequestKeys})
	 * @param response the answer
	 */
	void put(String key, ChatResponse response);

	/**
	 * The last good answer to a request, if it is younger than the cache's time to live.
	 * @param key the request's key
	 * @return the answer and when it was given, or empty
	 */
	Optional<CachedAnswer> get(String key);

	/**
	 * An answer kept for the CACHED tier.
	 *
	 * @param response the answer as it was given
	 * @param answeredAt when it was given
	 */
	public record CachedAnswer(ChatResponse response, Instant answeredAt) implements Serializable {
	}

}
