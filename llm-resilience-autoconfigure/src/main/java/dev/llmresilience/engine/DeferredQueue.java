package dev.llmresilience.engine;

import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.failure.LlmRequestException;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.DeferredRequestFailedEvent;
import dev.llmresilience.spi.DeferredStore;
import dev.llmresilience.spi.DeferredStore.DeferredEntry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationEventPublisher;

/**
 * The deferred tier: holds requests that nothing could answer, retries each in the background
 * after {@code delay}, then after twice that, and so on, up to {@code max-attempts}, and ends each
 * one COMPLETED (publishing {@link DeferredRequestCompletedEvent}) or FAILED (publishing
 * {@link DeferredRequestFailedEvent}). Holds at most {@code capacity} pending requests; past it
 * {@link #enqueue} refuses, and the caller gets BUSY: never a silent drop. Timers run on Reactor's
 * parallel scheduler, so tests can drive them with virtual time.
 *
 * <p>Over a {@link DeferredStore#isShared() shared} store the replicas form one queue: the store
 * decides which replica runs each request, the capacity and {@link #pending()} are the fleet's, and
 * each request ends once; its event is published by the replica whose end counted, or, if that
 * replica dies before it could, by the one that takes its requests over (at least once).
 */
final class DeferredQueue implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(DeferredQueue.class);

	private static final SecureRandom random = seededRandom();

	private final DeferredStore store;

	private final Duration delay;

	private final int maxAttempts;

	private final int capacity;

	private final ApplicationEventPublisher events;

	private final Clock clock;

	private final AtomicInteger pending = new AtomicInteger();

	private final DeferredTimers timers = new DeferredTimers();

	/** The background attempts of requests accepted here, for a shared store that has no runner. */
	private final Map<String, Function<ChatRequest, Mono<ChatResponse>>> lives = new ConcurrentHashMap<>();

	private volatile @Nullable Function<ChatRequest, Mono<ChatResponse>> runner;

	/** Refuses, before it is sent, a request that was kept where others can write (a shared store). */
	private volatile Consumer<ChatRequest> check = (request) -> {
	};

	private final AtomicInteger accepted = new AtomicInteger();

	private final AtomicInteger completed = new AtomicInteger();

	private final AtomicInteger failed = new AtomicInteger();

	/**
	 * Create a queue.
	 * @param store where the requests are kept
	 * @param delay wait before the first background attempt
	 * @param maxAttempts background attempts before a request fails
	 * @param capacity pending requests held at once
	 * @param events where completion and failure are published
	 * @param clock the clock of the entries' timestamps
	 */
	public DeferredQueue(DeferredStore store, Duration delay, int maxAttempts, int capacity,
			ApplicationEventPublisher events, Clock clock) {
		this.store = store;
		this.delay = delay;
		this.maxAttempts = maxAttempts;
		this.capacity = capacity;
		this.events = events;
		this.clock = clock;
		this.pending.set(store.pendingCount());
		store.start(new StoreRunner());
	}

	/**
	 * How to make a background attempt of a request that another replica queued (a shared store
	 * hands those to this one), and how to check such a request first. The gateway gives both;
	 * without them, a replica runs only the requests it queued itself.
	 * @param attempt makes one background attempt: a response, empty when nothing answered, or an error
	 * @param check the checks a new request gets: throws (an {@link LlmRequestException}) to refuse
	 * one, which then ends FAILED with the refusal as its reason, unsent; a request handed over by a
	 * shared store comes from Redis, which whoever can write to it may have changed
	 */
	public void runWith(Function<ChatRequest, Mono<ChatResponse>> attempt, Consumer<ChatRequest> check) {
		this.check = check;
		this.runner = attempt;
		this.lives.clear();
	}

	/**
	 * Defer a request. Over a shared store the ticket comes once the store has the request where it
	 * outlives this replica, or has given up trying for now (a short timeout) and holds it here;
	 * {@link #lookup} tells which ({@link DeferredResult#durable()}).
	 * @param request the request
	 * @param live makes one background attempt: a response, empty when nothing answered, or an error
	 * @return the ticket, or empty when the queue is full; never an error
	 */
	public Mono<String> enqueue(ChatRequest request, Function<ChatRequest, Mono<ChatResponse>> live) {
		boolean shared = this.store.isShared();
		if (shared ? this.store.pendingCount() >= this.capacity : this.pending.incrementAndGet() > this.capacity) {
			if (!shared) {
				this.pending.decrementAndGet();
			}
			return Mono.empty();
		}
		Instant now = this.clock.instant();
		DeferredEntry entry = new DeferredEntry(newTicket(), request, DeferredResult.State.PENDING, 0, null, null, now,
				now);
		this.accepted.incrementAndGet();
		if (shared) {
			if (this.runner == null) {
				this.lives.put(entry.ticket(), live);
			}
			return this.store.add(entry).thenReturn(entry.ticket());
		}
		this.store.save(entry);
		schedule(entry, live, this.delay);
		return Mono.just(entry.ticket());
	}

	/**
	 * The state of a deferred request, wherever it is kept (any replica's, over a shared store),
	 * without blocking.
	 * @param ticket its ticket
	 * @return its state, or empty for an unknown ticket
	 */
	public Mono<DeferredResult> lookup(String ticket) {
		return this.store.lookup(ticket);
	}

	private void schedule(DeferredEntry entry, Function<ChatRequest, Mono<ChatResponse>> live, Duration wait) {
		this.timers.schedule(entry.ticket(), wait, () -> live.apply(entry.request()),
				(answer) -> answer.ifPresentOrElse((response) -> complete(entry, response),
						() -> attemptFailed(entry, live, null)),
				(error) -> attemptFailed(entry, live, error));
	}

	private void complete(DeferredEntry entry, ChatResponse response) {
		ChatResponse answer = response.toBuilder().ticket(entry.ticket()).build();
		end(entry.attempted(this.clock.instant()).completed(answer, this.clock.instant()),
				() -> publishCompleted(entry.ticket(), answer));
	}

	private void attemptFailed(DeferredEntry entry, Function<ChatRequest, Mono<ChatResponse>> live,
			@Nullable Throwable error) {
		DeferredEntry attempted = entry.attempted(this.clock.instant());
		if (error instanceof LlmRequestException refused) {
			fail(attempted, ((refused.endpoint() != null) ? "Refused by the provider: " : "Refused: ")
					+ refused.getMessage());
		}
		else if (attempted.attempts() >= this.maxAttempts) {
			fail(attempted, "No endpoint could answer in " + attempted.attempts() + " background attempts");
		}
		else {
			this.store.save(attempted);
			schedule(attempted, live, this.delay.multipliedBy(1L << Math.min(20, attempted.attempts())));
		}
	}

	private void fail(DeferredEntry entry, String reason) {
		end(entry.failed(reason, this.clock.instant()), () -> publishFailed(entry.ticket(), reason));
	}

	/** A request completed, its end being the one that counted: counted here, and its event published. */
	private void publishCompleted(String ticket, ChatResponse answer) {
		this.completed.incrementAndGet();
		publish(new DeferredRequestCompletedEvent(this, ticket, answer));
	}

	/** A request failed, its end being the one that counted: counted here, and its event published. */
	private void publishFailed(String ticket, String reason) {
		this.failed.incrementAndGet();
		publish(new DeferredRequestFailedEvent(this, ticket, reason));
	}

	/**
	 * The request has ended before its event is published: a listener that throws must not reach
	 * the timer's callback, which would take the exception for a failed attempt and run the ended
	 * request again.
	 */
	private void publish(ApplicationEvent event) {
		try {
			this.events.publishEvent(event);
		}
		catch (RuntimeException ex) {
			logger.warn("A listener of " + event.getClass().getSimpleName()
					+ " failed; the deferred request's outcome stands: " + ex, ex);
		}
	}

	private void end(DeferredEntry entry, Runnable won) {
		this.timers.remove(entry.ticket());
		this.lives.remove(entry.ticket());
		if (!this.store.isShared()) {
			this.pending.decrementAndGet();
		}
		this.store.end(entry, won);
	}

	/**
	 * How many requests are pending (in the whole fleet, over a shared store, as last counted).
	 * @return the count
	 */
	public int pending() {
		return this.store.isShared() ? this.store.pendingCount() : Math.max(0, this.pending.get());
	}

	/**
	 * How many pending requests this instance holds only, not yet stored where they outlive it (all
	 * of them with the in-memory store; over Redis, those taken while Redis was unreachable or had
	 * not acknowledged them yet).
	 * @return the count
	 */
	public int notDurable() {
		return this.store.notDurableCount();
	}

	/**
	 * How many requests the queue holds at most.
	 * @return the capacity
	 */
	public int capacity() {
		return this.capacity;
	}

	/**
	 * Requests accepted, completed and failed by this instance since start, and {@link #pending()}.
	 * @return the counts
	 */
	public Counts counts() {
		return new Counts(this.accepted.get(), this.completed.get(), this.failed.get(), pending());
	}

	/**
	 * Stop the timers and report, at WARN, how many requests are still pending: the in-memory store
	 * does not survive a restart. Their tickets are not logged: a ticket is all it takes to read the
	 * answer, and logs are read by more people than the callers who hold them. (A shared store
	 * reports what it could not hand over itself.)
	 */
	@Override
	public void close() {
		this.timers.disposeAll();
		if (this.store.isShared()) {
			return;
		}
		int pending = this.store.pendingCount();
		if (pending > 0) {
			logger.warn(pending + " deferred LLM request(s) still pending at shutdown; with a store that does not "
					+ "outlive the application (the default in-memory one) they are lost");
		}
	}

	private static String newTicket() {
		byte[] bytes = new byte[16];
		random.nextBytes(bytes);
		return "dfr_" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
	}

	/**
	 * A ticket source that never reads a file once made: tickets are drawn on event loops, where the
	 * default {@code NativePRNG} would read {@code /dev/urandom} (behind one JVM-wide lock) every
	 * 100 ms. A DRBG seeds itself once, on its first use: made to happen here, on the thread that
	 * loads this class, not on the first deferred call.
	 */
	private static SecureRandom seededRandom() {
		try {
			SecureRandom drbg = SecureRandom.getInstance("DRBG");
			drbg.nextBytes(new byte[1]);
			return drbg;
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("This JVM has no DRBG SecureRandom (every JDK since 9 has one); "
					+ "deferred tickets cannot be drawn", ex);
		}
	}

	/** Runs, when due, what a shared store hands to this replica. */
	private final class StoreRunner implements DeferredStore.Runner {

		@Override
		public void run(DeferredEntry entry) {
			Function<ChatRequest, Mono<ChatResponse>> live = (runner != null) ? runner : lives.get(entry.ticket());
			if (live == null) {
				logger.warn("A deferred request was queued by another replica, and this one has no gateway to run it with");
				return;
			}
			try {
				check.accept(entry.request());
			}
			catch (RuntimeException ex) {
				fail(entry, "Refused before it was sent: " + ex.getMessage());
				return;
			}
			Duration backoff = delay.multipliedBy(1L << Math.min(20, entry.attempts()));
			Duration wait = Duration.between(clock.instant(), entry.updatedAt().plus(backoff));
			// an entry's time comes from Redis too: one dated in the future waits no longer than its backoff
			schedule(entry, live, wait.isNegative() ? Duration.ZERO : (wait.compareTo(backoff) > 0) ? backoff : wait);
		}

		@Override
		public boolean release(String ticket) {
			return timers.release(ticket);
		}

		@Override
		public void failed(String ticket, String reason) {
			publishFailed(ticket, reason);
		}

		@Override
		public void ended(DeferredEntry entry) {
			ChatResponse answer = entry.response();
			if (entry.state() == DeferredResult.State.COMPLETED && answer != null) {
				publishCompleted(entry.ticket(), answer);
			}
			else if (entry.state() == DeferredResult.State.FAILED) {
				publishFailed(entry.ticket(), (entry.reason() != null) ? entry.reason() : "Failed on a replica that is gone");
			}
		}

	}

	/**
	 * Counts of deferred requests.
	 *
	 * @param accepted deferred since start
	 * @param completed answered in the background
	 * @param failed given up
	 * @param pending still waiting
	 */
	public record Counts(int accepted, int completed, int failed, int pending) {
	}

}
