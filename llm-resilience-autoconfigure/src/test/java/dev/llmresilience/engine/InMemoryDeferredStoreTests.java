package dev.llmresilience.engine;

import java.time.Duration;
import java.time.Instant;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.spi.DeferredStore.DeferredEntry;
import dev.llmresilience.support.MutableClock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The in-memory store on its own: an ended request's outcome can be fetched for exactly its
 * retention, a pending request is kept until it ends, and at most {@code max-retained} ended ones
 * are kept, the oldest dropped first.
 */
class InMemoryDeferredStoreTests {

	private static final Instant START = Instant.parse("2026-03-01T12:00:00Z");

	private final MutableClock clock = new MutableClock(START);

	@Test
	void endedRequestIsFoundForExactlyItsRetention() {
		InMemoryDeferredStore store = new InMemoryDeferredStore(Duration.ofHours(1), this.clock);
		store.save(pending("t-1").failed("no endpoint answered", START));
		this.clock.advance(Duration.ofHours(1));
		assertThat(store.find("t-1")).as("at the end of its retention").isPresent();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(store.find("t-1")).as("past its retention").isEmpty();
	}

	@Test
	void pendingRequestIsKeptWhateverItsAgeAndListedAsPending() {
		InMemoryDeferredStore store = new InMemoryDeferredStore(Duration.ofMinutes(1), this.clock);
		store.save(pending("waiting"));
		store.save(pending("done").failed("cancelled", START));
		this.clock.advance(Duration.ofDays(2));
		store.save(pending("later").failed("cancelled", this.clock.instant()));
		assertThat(store.find("waiting")).isPresent();
		assertThat(store.pending()).extracting(DeferredEntry::ticket).containsExactly("waiting");
		assertThat(store.pendingCount()).isOne();
		assertThat(store.find("done")).isEmpty();
		assertThat(store.find("later")).isPresent();
	}

	@Test
	void atMostMaxRetainedEndedRequestsAreKeptTheOldestDroppedFirst() {
		InMemoryDeferredStore store = new InMemoryDeferredStore(Duration.ofHours(1), 2, this.clock);
		store.save(pending("waiting"));
		store.save(pending("first").failed("x", START));
		store.save(pending("second").failed("x", START));
		// saved again when its outcome changes: still one of the two, and now the newest
		store.save(pending("first").failed("y", START));
		store.save(pending("third").failed("x", START));
		assertThat(store.find("second")).as("the oldest ended one").isEmpty();
		assertThat(store.find("first")).isPresent();
		assertThat(store.find("third")).isPresent();
		assertThat(store.find("waiting")).as("a pending request is never dropped").isPresent();
	}

	@Test
	void inMemoryEntriesAreNotDurable() {
		InMemoryDeferredStore store = new InMemoryDeferredStore(Duration.ofHours(1), this.clock);
		assertThat(store.add(pending("t-1")).block()).isFalse();
		assertThat(store.lookup("t-1").block())
			.isEqualTo(new DeferredResult("t-1", DeferredResult.State.PENDING, null, null, false));
		assertThat(store.notDurableCount()).isOne();
	}

	private DeferredEntry pending(String ticket) {
		return new DeferredEntry(ticket, ChatRequest.ofUser("later"), DeferredResult.State.PENDING, 0, null, null, START,
				START);
	}

}
