package dev.llmresilience.cache;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import dev.llmresilience.gateway.ChatResponse;

/**
 * A bounded in-memory {@link FallbackCache} (Caffeine): at most {@code max-entries} answers, each
 * for at most {@code ttl}. Used when the application has no {@code CacheManager}.
 */
public final class CaffeineFallbackCache implements FallbackCache {

	private final Cache<String, CachedAnswer> cache;

	private final Duration ttl;

	private final Clock clock;

	/**
	 * Create a cache.
	 * @param maxEntries answers kept at most
	 * @param ttl how long an answer may be served
	 * @param clock the clock answers are stamped and aged with
	 */
	public CaffeineFallbackCache(long maxEntries, Duration ttl, Clock clock) {
		this.cache = Caffeine.newBuilder().maximumSize(maxEntries).expireAfterWrite(ttl).build();
		this.ttl = ttl;
		this.clock = clock;
	}

	@Override
	public void put(String key, ChatResponse response) {
		this.cache.put(key, new CachedAnswer(response, this.clock.instant()));
	}

	@Override
	public Optional<CachedAnswer> get(String key) {
		CachedAnswer answer = this.cache.getIfPresent(key);
		if (answer == null || answer.answeredAt().plus(this.ttl).isBefore(this.clock.instant())) {
			return Optional.empty();
		}
		return Optional.of(answer);
	}

}
