package dev.llmresilience.autoconfigure;

import java.time.Duration;

/**
 * The last-good-answer cache, {@code llm.gateway.fallback-cache} (tier CACHED).
 */
public class FallbackCacheProperties {

	/** Whether an earlier answer to the same request is returned (tier CACHED) when nothing live can answer. */
	private boolean enabled = false;

	/** How long an answer may be served from the cache. */
	private Duration ttl = Duration.ofHours(1);

	/** Answers kept at most (in-memory cache only; with a CacheManager its own limits apply). */
	private long maxEntries = 10000;

	/** Name of the cache used when the application has a CacheManager. */
	private String cacheName = "llm-fallback";

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public Duration getTtl() {
		return this.ttl;
	}

	public void setTtl(Duration ttl) {
		this.ttl = ttl;
	}

	public long getMaxEntries() {
		return this.maxEntries;
	}

	public void setMaxEntries(long maxEntries) {
		this.maxEntries = maxEntries;
	}

	public String getCacheName() {
		return this.cacheName;
	}

	public void setCacheName(String cacheName) {
		this.cacheName = cacheName;
	}

}
