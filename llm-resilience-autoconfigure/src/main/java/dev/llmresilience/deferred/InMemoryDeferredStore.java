package dev.llmresilience.deferred;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import dev.llmresilience.chat.DeferredResult;

/**
 * Keeps deferred requests in memory. Pending ones stay until they end; ended ones are kept for
 * {@code retention} so that their callers can fetch the outcome, then dropped. Nothing survives a
 * restart.
 */
public class InMemoryDeferredStore implements DeferredStore {

	private final Map<String, DeferredEntry> entries = new ConcurrentHashMap<>();

	private final Duration retention;

	private final Clock clock;

	/**
	 * Create a store.
	 * @param retention how long an ended request's outcome is kept
	 * @param clock the clock
	 */
	public InMemoryDeferredStore(Duration retention, Clock clock) {
		this.retention = retention;
		this.clock = clock;
	}

	@Override
	public void save(DeferredEntry entry) {
		this.entries.put(entry.ticket(), entry);
		if (entry.state() != DeferredResult.State.PENDING) {
			purge();
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

	private void purge() {
		Instant now = this.clock.instant();
		this.entries.values().removeIf((entry) -> isExpired(entry, now));
	}

	private boolean isExpired(DeferredEntry entry, Instant now) {
		return entry.state() != DeferredResult.State.PENDING && entry.updatedAt().plus(this.retention).isBefore(now);
	}

}
