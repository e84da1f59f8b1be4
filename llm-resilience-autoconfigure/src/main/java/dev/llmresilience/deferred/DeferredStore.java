package dev.llmresilience.deferred;

import java.util.List;
import java.util.Optional;

/**
 * Where deferred requests are kept between their attempts. The default,
 * {@link InMemoryDeferredStore}, keeps them in memory: they do not survive a restart. Provide a
 * bean of this type to keep them elsewhere.
 */
public interface DeferredStore {

	/**
	 * Save an entry, new or updated.
	 * @param entry the entry
	 */
	void save(DeferredEntry entry);

	/**
	 * Find an entry.
	 * @param ticket its ticket
	 * @return the entry, or empty for an unknown (or expired) ticket
	 */
	Optional<DeferredEntry> find(String ticket);

	/**
	 * The entries still pending.
	 * @return the pending entries
	 */
	List<DeferredEntry> pending();

	/**
	 * How many entries are pending.
	 * @return the count
	 */
	default int pendingCount() {
		return pending().size();
	}

}
