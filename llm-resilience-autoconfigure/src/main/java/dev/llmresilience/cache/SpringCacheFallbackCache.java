package dev.llmresilience.cache;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

import dev.llmresilience.gateway.ChatResponse;

import org.springframework.cache.Cache;

/**
 * A {@link FallbackCache} over one cache of the application's {@code CacheManager}, so that its
 * size, eviction and distribution follow the application's cache configuration. The time to live
 * is also checked here, since not every cache has one.
 */
public final class SpringCacheFallbackCache implements FallbackCache {

	private final Cache cache;

	private final Duration ttl;

	private final Clock clock;

	/**
	 * Create a cache.
	 * @param cache the application's cache
	 * @param ttl how long an answer may be served
	 * @param clock the clock answers are stamped and aged with
	 */
	public SpringCacheFallbackCache(Cache cache, Duration ttl, Clock clock) {
		this.cache = cache;
		this.ttl = ttl;
		this.clock = clock;
	}

	@Override
	public void put(String key, ChatResponse response) {
		this.cache.put(key, new CachedAnswer(response, this.clock.instant()));
	}

	@Override
	public Optional<CachedAnswer> get(String key) {
		CachedAnswer answer = this.cache.get(key, CachedAnswer.class);
		if (answer == null || answer.answeredAt().plus(this.ttl).isBefore(this.clock.instant())) {
			return Optional.empty();
		}
		return Optional.of(answer);
	}

}
