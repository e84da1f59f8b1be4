package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.spi.DeferredStore;
import dev.llmresilience.spi.DeferredStore.DeferredEntry;

/**
 * Keeps deferred requests in memory. Pending ones stay until they end (the queue's capacity bounds
 * them); ended ones are kept for {@code retention} so that their callers can fetch the outcome, and
 * at most {@code maxRetained} of them, the oldest dropped first, so that a burst of requests cannot
 * hold a retention's worth of prompts and answers. Nothing survives a restart.
 */
class InMemoryDeferredStore implements DeferredStore {

	/** The built-in {@code llm.gateway.deferral.max-retained}. */
	public static final int DEFAULT_MAX_RETAINED = 1000;

	private final Map<String, DeferredEntry> entries = new ConcurrentHashMap<>();

	private final Deque<String> ended = new ArrayDeque<>();

	private final Duration retention;

	private final int maxRetained;

	private final Clock clock;

	/**
	 * Create a store that keeps at most {@value #DEFAULT_MAX_RETAINED} ended requests.
	 * @param retention how long an ended request's outcome is kept
	 * @param clock the clock
	 */
	public InMemoryDeferredStore(Duration retention, Clock clock) {
		this(retention, DEFAULT_MAX_RETAINED, clock);
	}

	/**
	 * Create a store.
	 * @param retention how long an ended request's outcome is kept
	 * @param maxRetained how many ended requests are kept at most
	 * @param clock the clock
	 */
	public InMemoryDeferredStore(Duration retention, int maxRetained, Clock clock) {
		this.retention = retention;
		this.maxRetained = maxRetained;
		this.clock = clock;
	}

	@Override
	public void save(DeferredEntry entry) {
		this.entries.put(entry.ticket(), entry);
		if (entry.state() != DeferredResult.State.PENDING) {
			purge();
			retain(entry.ticket());
		}
	}

	@Override
	public Optional<DeferredEntry> find(String ticket) {
		DeferredEntry entry = this.entries.get(ticket);
		if (entry != null && isExpired(entry, this.clock.instant())) {
			this.entries.remove(ticket, entry);
			return Optional.empty();
		}
		return Optional.ofNullable(entry);
	}

	@Override
	public List<DeferredEntry> pending() {
		return this.entries.values().stream().filter((entry) -> entry.state() == DeferredResult.State.PENDING).toList();
	}

	private synchronized void retain(String ticket) {
		this.ended.remove(ticket);
		this.ended.addLast(ticket);
		while (this.ended.size() > this.maxRetained) {
			String oldest = this.ended.removeFirst();
			this.entries.computeIfPresent(oldest,
					(key, entry) -> (entry.state() == DeferredResult.State.PENDING) ? entry : null);
		}
	}

	private void purge() {
		Instant now = this.clock.instant();
		this.entries.values().removeIf((entry) -> isExpired(entry, now));
	}

	private boolean isExpired(DeferredEntry entry, Instant now) {
		return entry.state() != DeferredResult.State.PENDING && entry.updatedAt().plus(this.retention).isBefore(now);
	}

}
