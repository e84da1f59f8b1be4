package dev.llmresilience.deferred;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.failure.LlmRequestException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationEventPublisher;

/**
 * The deferred tier: holds requests that nothing could answer, retries each in the background
 * after {@code delay}, then after twice that, and so on, up to {@code max-attempts}, and ends each
 * one COMPLETED (publishing {@link DeferredRequestCompletedEvent}) or FAILED (publishing
 * {@link DeferredRequestFailedEvent}). Holds at most {@code capacity} pending requests; past it
 * {@link #enqueue} refuses, and the caller gets BUSY: never a silent drop. Timers run on Reactor's
 * parallel scheduler, so tests can drive them with virtual time.
 */
public final class DeferredQueue implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(DeferredQueue.class);

	private static final SecureRandom random = new SecureRandom();

	private final DeferredStore store;

	private final Duration delay;

	private final int maxAttempts;

	private final int capacity;

	private final ApplicationEventPublisher events;

	private final Clock clock;

	private final AtomicInteger pending = new AtomicInteger();

	private final Map<String, Disposable> timers = new ConcurrentHashMap<>();

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
	}

	/**
	 * Defer a request.
	 * @param request the request
	 * @param live makes one background attempt: a response, empty when nothing answered, or an error
	 * @return the ticket, or empty when the queue is full
	 */
	public Optional<String> enqueue(ChatRequest request, Function<ChatRequest, Mono<ChatResponse>> live) {
		if (this.pending.incrementAndGet() > this.capacity) {
			this.pending.decrementAndGet();
			return Optional.empty();
		}
		Instant now = this.clock.instant();
		DeferredEntry entry = new DeferredEntry(newTicket(), request, DeferredResult.State.PENDING, 0, null, null, now,
				now);
		this.store.save(entry);
		this.accepted.incrementAndGet();
		schedule(entry, live);
		return Optional.of(entry.ticket());
	}

	/**
	 * The state of a deferred request.
	 * @param ticket its ticket
	 * @return its state, or empty for an unknown ticket
	 */
	public Optional<DeferredResult> result(String ticket) {
		return this.store.find(ticket).map(DeferredEntry::toResult);
	}

	private void schedule(DeferredEntry entry, Function<ChatRequest, Mono<ChatResponse>> live) {
		Duration wait = this.delay.multipliedBy(1L << Math.min(20, entry.attempts()));
		Disposable timer = Mono.delay(wait, Schedulers.parallel())
			.then(Mono.defer(() -> live.apply(entry.request())))
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.subscribe((answer) -> answer.ifPresentOrElse((response) -> complete(entry, response),
					() -> attemptFailed(entry, live, null)), (error) -> attemptFailed(entry, live, error));
		this.timers.put(entry.ticket(), timer);
	}

	private void complete(DeferredEntry entry, ChatResponse response) {
		ChatResponse answer = new ChatResponse(response.content(), response.endpoint(), response.model(),
				response.tier(), response.finishReason(), response.toolCalls(), response.usage(), response.cost(),
				response.latency(), response.attempts(), entry.ticket(), response.age());
		end(entry.attempted(this.clock.instant()).completed(answer, this.clock.instant()));
		this.completed.incrementAndGet();
		publish(new DeferredRequestCompletedEvent(this, entry.ticket(), answer));
	}

	private void attemptFailed(DeferredEntry entry, Function<ChatRequest, Mono<ChatResponse>> live,
			@Nullable Throwable error) {
		DeferredEntry attempted = entry.attempted(this.clock.instant());
		if (error instanceof LlmRequestException refused) {
			fail(attempted, "Refused by the provider: " + refused.getMessage());
		}
		else if (attempted.attempts() >= this.maxAttempts) {
			fail(attempted, "No endpoint could answer in " + attempted.attempts() + " background attempts");
		}
		else {
			this.store.save(attempted);
			schedule(attempted, live);
		}
	}

	private void fail(DeferredEntry entry, String reason) {
		end(entry.failed(reason, this.clock.instant()));
		this.failed.incrementAndGet();
		publish(new DeferredRequestFailedEvent(this, entry.ticket(), reason));
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

	private void end(DeferredEntry entry) {
		this.store.save(entry);
		this.timers.remove(entry.ticket());
		this.pending.decrementAndGet();
	}

	/**
	 * How many requests are pending.
	 * @return the count
	 */
	public int pending() {
		return Math.max(0, this.pending.get());
	}

	/**
	 * How many requests the queue holds at most.
	 * @return the capacity
	 */
	public int capacity() {
		return this.capacity;
	}

	/**
	 * Requests accepted, completed and failed since start.
	 * @return the counts
	 */
	public Counts counts() {
		return new Counts(this.accepted.get(), this.completed.get(), this.failed.get(), pending());
	}

	/**
	 * Stop the timers and report, at WARN, how many requests are still pending: the in-memory store
	 * does not survive a restart. Their tickets are not logged: a ticket is all it takes to read the
	 * answer, and logs are read by more people than the callers who hold them.
	 */
	@Override
	public void close() {
		this.timers.values().forEach(Disposable::dispose);
		this.timers.clear();
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
