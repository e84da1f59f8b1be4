package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;

import dev.llmresilience.spi.FallbackCache;
import dev.llmresilience.spi.FallbackCache.CachedAnswer;
import org.jspecify.annotations.Nullable;

import org.springframework.cache.Cache;

/**
 * A {@link FallbackCache} over one cache of the application's {@code CacheManager}, so that its
 * size, eviction and distribution follow the application's cache configuration. The time to live
 * is also checked here, since not every cache has one.
 */
final class SpringCacheFallbackCache extends TimedFallbackCache {

	private final Cache cache;

	/**
	 * Create a cache.
	 * @param cache the application's cache
	 * @param ttl how long an answer may be served
	 * @param clock the clock answers are stamped and aged with
	 */
	public SpringCacheFallbackCache(Cache cache, Duration ttl, Clock clock) {
		super(ttl, clock);
		this.cache = cache;
	}

	@Override
	void store(String key, CachedAnswer answer) {
		this.cache.put(key, answer);
	}

	@Override
	@Nullable CachedAnswer load(String key) {
		return this.cache.get(key, CachedAnswer.class);
	}

}
