package dev.llmresilience.spi;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * Where deferred requests are kept between their attempts. The default,
 * {@code InMemoryDeferredStore}, keeps them in memory: they do not survive a restart. Provide a
 * bean of this type to keep them elsewhere.
 *
 * <p>A store that replicas share ({@link #isShared()}) also decides which replica runs each
 * request: the {@code DeferredQueue} then hands it every new request with {@link #add} and runs
 * what the store hands back through {@link Runner}, and the store makes sure each request ends
 * once, fleet-wide ({@link #end}). The other methods' defaults suit a store of one instance.
 */
public interface DeferredStore {

	/**
	 * Save an entry, new or updated.
	 * @param entry the entry
	 */
	void save(DeferredEntry entry);

	/**
	 * Find an entry this instance knows without asking anything remote.
	 * @param ticket its ticket
	 * @return the entry, or empty for an unknown (or expired) ticket
	 */
	Optional<DeferredEntry> find(String ticket);

	/**
	 * The entries still pending that this instance holds.
	 * @return the pending entries
	 */
	List<DeferredEntry> pending();

	/**
	 * How many entries are pending (in the whole fleet, for a shared store, as last counted).
	 * @return the count
	 */
	default int pendingCount() {
		return pending().size();
	}

	/**
	 * How many pending entries are held by this instance only, not yet stored where they outlive it.
	 * @return all pending entries for a store that is not {@link #isDurable() durable}
	 */
	default int notDurableCount() {
		return isDurable() ? 0 : pending().size();
	}

	/**
	 * Find a request's state wherever it is kept, without blocking.
	 * @param ticket its ticket
	 * @return its state, or empty for an unknown (or expired) ticket
	 */
	default Mono<DeferredResult> lookup(String ticket) {
		return Mono.defer(() -> Mono.justOrEmpty(find(ticket).map((entry) -> entry.toResult(isDurable()))));
	}

	/**
	 * Whether what this store keeps outlives this instance (a restart, a crash): false for the
	 * in-memory store. A shared store tells it per request, through {@link #add} and {@link #lookup}.
	 * @return false by default
	 */
	default boolean isDurable() {
		return false;
	}

	/**
	 * Whether replicas share this store, so that it decides which of them runs each request.
	 * @return false for a store of one instance
	 */
	default boolean isShared() {
		return false;
	}

	/**
	 * A shared store's start: from now on it hands the requests this replica is to run to the
	 * runner. Called once, by the queue.
	 * @param runner runs a request when it is due
	 */
	default void start(Runner runner) {
	}

	/**
	 * Take a new request (shared stores only; others get {@link #save}): the store hands it to a
	 * replica's runner, this one's or another's. The caller is given its ticket once the returned
	 * Mono completes, so a store that can keep it where it outlives this instance completes only
	 * after it did, or when it gave up trying (within a short timeout: the caller is waiting), with
	 * the request then held here. It never blocks and never errors.
	 * @param entry the new entry
	 * @return true once the entry is stored where it outlives this instance, false if it is held here only
	 */
	default Mono<Boolean> add(DeferredEntry entry) {
		return Mono.fromCallable(() -> {
			save(entry);
			return isDurable();
		});
	}

	/**
	 * Record that a request ended, completed or failed. A shared store calls {@code won} only if
	 * this replica's end is the one that counts (no other replica ended the request first), possibly
	 * later, once it could tell; the queue publishes the request's event from it. A shared store
	 * keeps the event due until {@code won} has returned, and has {@link Runner#ended} publish it on
	 * another replica if this one dies first: at least once.
	 * @param entry the ended entry
	 * @param won what to do if this is the request's one end
	 */
	default void end(DeferredEntry entry, Runnable won) {
		save(entry);
		won.run();
	}

	/** Runs the requests a shared store hands to this replica. */
	interface Runner {

		/**
		 * Run a request's next attempt when it is due ({@code delay} doubled for each attempt made,
		 * from its last update).
		 * @param entry the pending entry
		 */
		void run(DeferredEntry entry);

		/**
		 * Stop running a request here, unless its attempt is under way.
		 * @param ticket its ticket
		 * @return true if it was stopped (or was not running here), false if its attempt is under way
		 */
		boolean release(String ticket);

		/**
		 * A request the store ended FAILED by itself, this replica's end being the one that
		 * counted: its entry could not be read, so it cannot be run. Publishes its failed event.
		 * @param ticket its ticket
		 * @param reason why it failed
		 */
		void failed(String ticket, String reason);

		/**
		 * A request that ended on a replica that is gone, before that replica published its event:
		 * the store took it over, ended. Publishes its event (so an event may come twice, if that
		 * replica died just after it published and before the store learned of it; never not at all).
		 * @param entry the ended entry, COMPLETED or FAILED
		 */
		void ended(DeferredEntry entry);

	}

	/**
	 * A deferred request and where it stands.
	 *
	 * @param ticket its unguessable ticket
	 * @param request the request
	 * @param state where it stands
	 * @param attempts background attempts made so far
	 * @param response the answer once completed
	 * @param reason why it failed, once failed
	 * @param createdAt when it was deferred
	 * @param updatedAt when it last changed
	 */
	public record DeferredEntry(String ticket, ChatRequest request, DeferredResult.State state, int attempts,
			@Nullable ChatResponse response, @Nullable String reason, Instant createdAt, Instant updatedAt) {

		/**
		 * This entry with one more attempt begun.
		 * @param now the time
		 * @return the entry
		 */
		public DeferredEntry attempted(Instant now) {
			return new DeferredEntry(this.ticket, this.request, this.state, this.attempts + 1, null, null, this.createdAt,
					now);
		}

		/**
		 * This entry answered.
		 * @param response the answer
		 * @param now the time
		 * @return the entry
		 */
		public DeferredEntry completed(ChatResponse response, Instant now) {
			return new DeferredEntry(this.ticket, this.request, DeferredResult.State.COMPLETED, this.attempts, response,
					null, this.createdAt, now);
		}

		/**
		 * This entry given up on.
		 * @param reason why
		 * @param now the time
		 * @return the entry
		 */
		public DeferredEntry failed(String reason, Instant now) {
			return new DeferredEntry(this.ticket, this.request, DeferredResult.State.FAILED, this.attempts, null, reason,
					this.createdAt, now);
		}

		/**
		 * This entry as the gateway reports it.
		 * @param durable whether the store keeps it where it outlives this instance
		 * @return the result
		 */
		public DeferredResult toResult(boolean durable) {
			return new DeferredResult(this.ticket, this.state, this.response, this.reason, durable);
		}

		@Override
		public String toString() {
			// No ticket: it is a bearer token for the answer, and a toString ends up in logs.
			return "DeferredEntry[state=" + this.state + ", attempts=" + this.attempts + ", createdAt=" + this.createdAt
					+ "]";
		}

	}

}
