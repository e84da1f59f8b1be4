package dev.llmresilience.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.DeferredRequestFailedEvent;
import dev.llmresilience.spi.DeferredStore;
import dev.llmresilience.spi.DeferredStore.DeferredEntry;
import dev.llmresilience.support.MutableClock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.scheduler.VirtualTimeScheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The queue over a store that replicas share, one written as an extender would (in memory here,
 * handing back what the test hands it, every end counting), in virtual time: the fleet's count
 * bounds new requests; a request the store hands over waits its backoff from its last update, and
 * never longer, whatever time the store says; it is checked before it is sent and ends FAILED,
 * unsent, when the check refuses it; without a gateway a replica runs only what it queued; one
 * released before its attempt does not run here, one under way is not released; a closed queue
 * makes no more attempts; and the ends the store reports publish their events.
 */
class SharedStoreQueueTests {

	private static final Instant NOW = Instant.parse("2026-12-01T12:00:00Z");

	private static final Duration DELAY = Duration.ofSeconds(10);

	private final MutableClock clock = new MutableClock(NOW);

	private final SharedStore store = new SharedStore();

	private final List<Object> events = new CopyOnWriteArrayList<>();

	private final List<String> sent = new CopyOnWriteArrayList<>();

	private VirtualTimeScheduler time;

	private DeferredQueue queue;

	@BeforeEach
	void start() {
		this.time = VirtualTimeScheduler.getOrSet();
		this.queue = new DeferredQueue(this.store, DELAY, 3, 2, this.events::add, this.clock);
	}

	@AfterEach
	void stop() {
		this.queue.close();
		VirtualTimeScheduler.reset();
	}

	@Test
	void aRequestHandedOverRunsOnceItsBackoffFromItsLastUpdateIsOver() {
		this.queue.runWith(this::answer, (request) -> {
		});
		// two attempts made, the last 15 s ago: the third waits four delays from then, 25 s from now
		this.store.runner.run(pending("dfr_two", 2, NOW.minusSeconds(15)));
		this.time.advanceTimeBy(Duration.ofSeconds(25).minusMillis(1));
		assertThat(this.sent).isEmpty();
		this.time.advanceTimeBy(Duration.ofMillis(1));
		assertThat(this.sent).containsExactly("dfr_two");
		assertThat(this.store.ended).singleElement().satisfies((entry) -> {
			assertThat(entry.state()).isEqualTo(DeferredResult.State.COMPLETED);
			assertThat(entry.attempts()).isEqualTo(3);
			assertThat(entry.response().content()).isEqualTo("answer to dfr_two");
			assertThat(entry.response().ticket()).isEqualTo("dfr_two");
		});
		assertThat(this.events).singleElement()
			.isInstanceOfSatisfying(DeferredRequestCompletedEvent.class, (event) -> {
				assertThat(event.getTicket()).isEqualTo("dfr_two");
				assertThat(event.getResponse().content()).isEqualTo("answer to dfr_two");
			});
		assertThat(this.queue.counts().completed()).isOne();
	}

	@Test
	void aRequestDatedInTheFutureWaitsNoLongerThanItsBackoffAndAnOverdueOneRunsAtOnce() {
		this.queue.runWith(this::answer, (request) -> {
		});
		this.store.runner.run(pending("dfr_future", 0, NOW.plus(Duration.ofDays(1))));
		this.store.runner.run(pending("dfr_overdue", 1, NOW.minus(Duration.ofDays(1))));
		this.time.advanceTimeBy(Duration.ZERO);
		assertThat(this.sent).containsExactly("dfr_overdue");
		this.time.advanceTimeBy(DELAY.minusMillis(1));
		assertThat(this.sent).containsExactly("dfr_overdue");
		this.time.advanceTimeBy(Duration.ofMillis(1));
		assertThat(this.sent).containsExactly("dfr_overdue", "dfr_future");
	}

	@Test
	void aRequestHandedOverThatItsCheckRefusesEndsFailedUnsent() {
		this.queue.runWith(this::answer, (request) -> {
			throw new IllegalArgumentException("ChatRequest.extra sets 'model', a field the starter writes");
		});
		this.store.runner.run(pending("dfr_tampered", 0, NOW.minus(Duration.ofDays(1))));
		this.time.advanceTimeBy(Duration.ofDays(1));
		assertThat(this.sent).as("sent upstream").isEmpty();
		String reason = "Refused before it was sent: ChatRequest.extra sets 'model', a field the starter writes";
		assertThat(this.store.ended).extracting(DeferredEntry::ticket, DeferredEntry::state, DeferredEntry::reason)
			.containsExactly(tuple("dfr_tampered", DeferredResult.State.FAILED, reason));
		assertThat(this.events).singleElement().isInstanceOfSatisfying(DeferredRequestFailedEvent.class, (event) -> {
			assertThat(event.getTicket()).isEqualTo("dfr_tampered");
			assertThat(event.getReason()).isEqualTo(reason);
		});
		assertThat(this.queue.counts().failed()).isOne();
	}

	@Test
	void withoutAGatewayAReplicaRunsOnlyTheRequestsItQueuedItself() {
		String ticket = this.queue.enqueue(ChatRequest.builder().user("mine").deferrable(true).build(), (request) -> {
			this.sent.add(request.messages().get(0).content());
			return Mono.just(response("answered here"));
		}).block();
		assertThat(this.store.added).extracting(DeferredEntry::ticket).containsExactly(ticket);
		// the store hands this replica its own request and one another replica queued
		this.store.runner.run(this.store.added.get(0));
		this.store.runner.run(pending("dfr_other", 0, NOW));
		this.time.advanceTimeBy(Duration.ofDays(1));
		assertThat(this.sent).containsExactly("mine");
		assertThat(this.store.ended).extracting(DeferredEntry::ticket).containsExactly(ticket);
		assertThat(this.queue.counts().accepted()).isOne();
	}

	@Test
	void theFleetsPendingCountBoundsNewRequests() {
		this.store.fleetPending = 1;
		assertThat(this.queue.enqueue(ChatRequest.builder().user("one").deferrable(true).build(), this::answer).block())
			.startsWith("dfr_");
		this.store.fleetPending = 2;
		assertThat(this.queue.enqueue(ChatRequest.builder().user("two").deferrable(true).build(), this::answer).block())
			.as("refused at the capacity, 2").isNull();
		assertThat(this.store.added).hasSize(1);
		assertThat(this.queue.pending()).as("the fleet's").isEqualTo(2);
		assertThat(this.queue.counts()).isEqualTo(new DeferredQueue.Counts(1, 0, 0, 2));
	}

	@Test
	void aRequestReleasedBeforeItsAttemptDoesNotRunHereAndOneUnderWayIsNotReleased() {
		Sinks.One<ChatResponse> upstream = Sinks.one();
		this.queue.runWith((request) -> {
			String prompt = request.messages().get(0).content();
			this.sent.add(prompt);
			return "dfr_busy".equals(prompt) ? upstream.asMono() : answer(request);
		}, (request) -> {
		});
		this.store.runner.run(pending("dfr_busy", 0, NOW.minus(DELAY)));
		this.store.runner.run(pending("dfr_left", 0, NOW));
		this.time.advanceTimeBy(Duration.ZERO);
		assertThat(this.sent).containsExactly("dfr_busy");
		assertThat(this.store.runner.release("dfr_busy")).as("its attempt is under way").isFalse();
		assertThat(this.store.runner.release("dfr_left")).isTrue();
		assertThat(this.store.runner.release("dfr_unknown")).as("not running here").isTrue();
		this.time.advanceTimeBy(Duration.ofDays(1));
		assertThat(this.sent).containsExactly("dfr_busy");
		upstream.tryEmitValue(response("late"));
		assertThat(this.store.ended).extracting(DeferredEntry::ticket, DeferredEntry::state)
			.containsExactly(tuple("dfr_busy", DeferredResult.State.COMPLETED));
		assertThat(this.store.runner.release("dfr_busy")).as("its attempt is over").isTrue();
	}

	@Test
	void aClosedQueueMakesNoMoreAttempts() {
		this.queue.runWith(this::answer, (request) -> {
		});
		this.store.runner.run(pending("dfr_later", 0, NOW));
		this.queue.close();
		this.time.advanceTimeBy(Duration.ofDays(1));
		assertThat(this.sent).isEmpty();
		assertThat(this.store.ended).isEmpty();
	}

	@Test
	void theEndsTheStoreReportsPublishTheirEvents() {
		ChatResponse answer = response("answer to dfr_done");
		this.store.runner.ended(pending("dfr_done", 1, NOW).completed(answer, NOW));
		this.store.runner.ended(pending("dfr_failed", 3, NOW).failed("No endpoint could answer", NOW));
		this.store.runner.ended(new DeferredEntry("dfr_gone", request("dfr_gone"), DeferredResult.State.FAILED, 1,
				null, null, NOW, NOW));
		this.store.runner.ended(pending("dfr_still", 0, NOW));
		this.store.runner.ended(new DeferredEntry("dfr_no_answer", request("dfr_no_answer"),
				DeferredResult.State.COMPLETED, 1, null, null, NOW, NOW));
		this.store.runner.failed("dfr_unreadable", "Its entry in Redis could not be read: it is not JSON");
		assertThat(this.events).hasSize(4);
		assertThat(this.events.get(0)).isInstanceOfSatisfying(DeferredRequestCompletedEvent.class, (event) -> {
			assertThat(event.getTicket()).isEqualTo("dfr_done");
			assertThat(event.getResponse()).isEqualTo(answer);
		});
		assertThat(this.events.subList(1, 4)).allSatisfy((event) -> assertThat(event)
			.isInstanceOf(DeferredRequestFailedEvent.class))
			.map(DeferredRequestFailedEvent.class::cast)
			.extracting(DeferredRequestFailedEvent::getTicket, DeferredRequestFailedEvent::getReason)
			.containsExactly(tuple("dfr_failed", "No endpoint could answer"),
					tuple("dfr_gone", "Failed on a replica that is gone"),
					tuple("dfr_unreadable", "Its entry in Redis could not be read: it is not JSON"));
		assertThat(this.queue.counts()).extracting(DeferredQueue.Counts::completed, DeferredQueue.Counts::failed)
			.containsExactly(1, 3);
	}

	private Mono<ChatResponse> answer(ChatRequest request) {
		String prompt = request.messages().get(0).content();
		this.sent.add(prompt);
		return Mono.just(response("answer to " + prompt));
	}

	private static ChatResponse response(String content) {
		return ChatResponse.builder()
			.content(content)
			.endpoint("primary")
			.model("primary-model")
			.finishReason("stop")
			.latency(Duration.ofMillis(5))
			.build();
	}

	/** A pending request whose prompt is its ticket, so that what was sent names the request. */
	private static DeferredEntry pending(String ticket, int attempts, Instant updatedAt) {
		return new DeferredEntry(ticket, request(ticket), DeferredResult.State.PENDING, attempts, null, null,
				NOW.minus(Duration.ofDays(2)), updatedAt);
	}

	private static ChatRequest request(String prompt) {
		return ChatRequest.builder().user(prompt).deferrable(true).build();
	}

	/** A shared store in memory: it hands requests over when the test does, and every end counts. */
	private static final class SharedStore implements DeferredStore {

		private final Map<String, DeferredEntry> entries = new ConcurrentHashMap<>();

		final List<DeferredEntry> added = new CopyOnWriteArrayList<>();

		final List<DeferredEntry> ended = new CopyOnWriteArrayList<>();

		volatile int fleetPending;

		Runner runner;

		@Override
		public boolean isShared() {
			return true;
		}

		@Override
		public void start(Runner runner) {
			this.runner = runner;
		}

		@Override
		public Mono<Boolean> add(DeferredEntry entry) {
			this.added.add(entry);
			save(entry);
			return Mono.just(true);
		}

		@Override
		public void save(DeferredEntry entry) {
			this.entries.put(entry.ticket(), entry);
		}

		@Override
		public Optional<DeferredEntry> find(String ticket) {
			return Optional.ofNullable(this.entries.get(ticket));
		}

		@Override
		public List<DeferredEntry> pending() {
			return this.entries.values().stream().filter((entry) -> entry.state() == DeferredResult.State.PENDING).toList();
		}

		@Override
		public int pendingCount() {
			return this.fleetPending;
		}

		@Override
		public void end(DeferredEntry entry, Runnable won) {
			save(entry);
			this.ended.add(entry);
			won.run();
		}

	}

}
