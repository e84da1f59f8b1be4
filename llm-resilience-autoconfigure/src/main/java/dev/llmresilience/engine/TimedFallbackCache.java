package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.spi.FallbackCache;
import dev.llmresilience.spi.FallbackCache.CachedAnswer;
import org.jspecify.annotations.Nullable;

/**
 * Stamps each answer with the time it was given and serves it only within the time to live,
 * whatever the store below does about expiry.
 */
abstract class TimedFallbackCache implements FallbackCache {

	private final Duration ttl;

	private final Clock clock;

	TimedFallbackCache(Duration ttl, Clock clock) {
		this.ttl = ttl;
		this.clock = clock;
	}

	@Override
	public final void put(String key, ChatResponse response) {
		store(key, new CachedAnswer(response, this.clock.instant()));
	}

	@Override
	public final Optional<CachedAnswer> get(String key) {
		CachedAnswer answer = load(key);
		if (answer == null || answer.answeredAt().plus(this.ttl).isBefore(this.clock.instant())) {
			return Optional.empty();
		}
		return Optional.of(answer);
	}

	abstract void store(String key, CachedAnswer answer);

	abstract @Nullable CachedAnswer load(String key);

}
