package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.llmresilience.spi.FallbackCache;
import dev.llmresilience.spi.FallbackCache.CachedAnswer;
import org.jspecify.annotations.Nullable;

/**
 * A bounded in-memory {@link FallbackCache} (Caffeine): at most {@code max-entries} answers, each
 * for at most {@code ttl}. Used when the application has no {@code CacheManager}.
 */
final class CaffeineFallbackCache extends TimedFallbackCache {

	private final Cache<String, CachedAnswer> cache;

	/**
	 * Create a cache.
	 * @param maxEntries answers kept at most
	 * @param ttl how long an answer may be served
	 * @param clock the clock answers are stamped and aged with
	 */
	public CaffeineFallbackCache(long maxEntries, Duration ttl, Clock clock) {
		super(ttl, clock);
		this.cache = Caffeine.newBuilder().maximumSize(maxEntries).expireAfterWrite(ttl).build();
	}

	@Override
	void store(String key, CachedAnswer answer) {
		this.cache.put(key, answer);
	}

	@Override
	@Nullable CachedAnswer load(String key) {
		return this.cache.getIfPresent(key);
	}

}
