package dev.llmresilience.protocol;

import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.client.ClientResponse;

/**
 * The caps on what one streamed attempt may send, so that a faulty provider cannot grow memory
 * without bound: {@code max-stream-size} bytes of body and {@code max-stream-events} server-sent
 * events in all ({@code max-response-size} already caps each event), and at most
 * {@value #MAX_LEADING_WHITESPACE} characters of whitespace kept before the first token. Past a
 * cap the attempt fails as {@link Outcome#MALFORMED_RESPONSE}: retried and counted as a provider
 * failure before the first token, a broken stream after it. One instance serves one attempt; every
 * protocol's client reads its streams through one.
 */
public final class StreamLimits {

	/** Whitespace kept before a stream's first token, in characters; the rest is dropped. */
	public static final int MAX_LEADING_WHITESPACE = 1024;

	private final String endpoint;

	private final long maxBytes;

	private final long maxEvents;

	private final SseEvents sse;

	private long bytes;

	private long events;

	private int leadingWhitespace;

	private boolean answering;

	/**
	 * The caps of one attempt.
	 * @param settings the endpoint's settings
	 */
	public StreamLimits(ClientSettings settings) {
		this.endpoint = settings.name();
		this.maxBytes = settings.limits().maxStreamSize();
		this.maxEvents = settings.limits().maxStreamEvents();
		this.sse = new SseEvents((int) Math.min(Integer.MAX_VALUE, settings.limits().maxResponseSize()));
	}

	/**
	 * The server-sent events of a response, split without logging them ({@link SseEvents}), failing
	 * once the body has sent more than {@code max-stream-size} bytes or more than
	 * {@code max-stream-events} events.
	 * @param response the response
	 * @return the events
	 */
	public Flux<ServerSentEvent<String>> events(ClientResponse response) {
		return this.sse.read(countBytes(response.body(BodyExtractors.toDataBuffers()))).handle((event, sink) -> {
			if (++this.events > this.maxEvents) {
				sink.error(exceeded("more than max-stream-events (" + this.maxEvents + " events)"));
			}
			else {
				sink.next(event);
			}
		});
	}

	/**
	 * The deltas of the attempt, with the whitespace sent before the first token cut to
	 * {@value #MAX_LEADING_WHITESPACE} characters.
	 * @param deltas the deltas a protocol's reader made of the events
	 * @return the deltas
	 */
	public Flux<CompletionDelta> deltas(Flux<CompletionDelta> deltas) {
		return deltas.map(this::keepLeading);
	}

	private Flux<DataBuffer> countBytes(Flux<DataBuffer> body) {
		return body.handle((buffer, sink) -> {
			this.bytes += buffer.readableByteCount();
			if (this.bytes > this.maxBytes) {
				DataBufferUtils.release(buffer);
				sink.error(exceeded("more than max-stream-size (" + this.maxBytes + " bytes)"));
			}
			else {
				sink.next(buffer);
			}
		});
	}

	private CompletionDelta keepLeading(CompletionDelta delta) {
		if (this.answering || (this.answering = delta.hasAnswer())) {
			return delta;
		}
		String whitespace = delta.content();
		int kept = Math.min(whitespace.length(), MAX_LEADING_WHITESPACE - this.leadingWhitespace);
		this.leadingWhitespace += kept;
		return (kept == whitespace.length()) ? delta : delta.withContent(whitespace.substring(0, kept));
	}

	private LlmUpstreamException exceeded(String what) {
		return new LlmUpstreamException(this.endpoint, Outcome.MALFORMED_RESPONSE, 200, null,
				"The stream sent " + what + " in one attempt; the attempt is ended as a faulty answer. Raise the "
						+ "endpoint's max-stream-size or max-stream-events if its answers are really that long.",
				null);
	}

	/**
	 * The end of a stream's last event ({@code [DONE]}, {@code message_stop}) is not the end of its
	 * HTTP body: the body's last chunk comes right after it. A reader that completed at the last event
	 * cancelled the body before that chunk, and Reactor Netty closes a connection whose body was
	 * cancelled, so every streamed call (and every chat, which goes upstream as a stream) opened a new
	 * connection: a TCP and TLS handshake per call against a real provider. So a reader marks the last
	 * event and reads on, ignoring anything after it, until the body ends; only a server that keeps the
	 * body open after its last event is cut, after {@link #GRACE}.
	 * <p>
	 * The graces of all streams on a scheduler wait in one queue ({@link Graces}), with one task of the
	 * scheduler armed for the oldest: a timer of its own per stream, set at the last event and
	 * cancelled microseconds later when the body ends, woke a {@code parallel-} thread on every
	 * streamed call.
	 */
	public static final class StreamEnd {

		/** How long a body may stay open after the stream's last event before it is cut. */
		public static final Duration GRACE = Duration.ofSeconds(1);

		private final Sinks.Empty<Void> cut = Sinks.empty();

		private volatile boolean ended;

		private volatile Graces.@Nullable Grace grace;

		/** Note that the stream's last event has come: its body has {@link #GRACE} to end. */
		public void reached() {
			if (!this.ended) {
				this.ended = true;
				this.grace = Graces.on(Schedulers.parallel()).add(this.cut);
			}
		}

		/**
		 * Whether the stream's last event has come.
		 * @return true once {@link #reached()}
		 */
		public boolean isReached() {
			return this.ended;
		}

		/**
		 * The deltas until the body ends, or at most {@link #GRACE} after the last event.
		 * @param <T> the deltas' type
		 * @param deltas the deltas read from the body
		 * @return the deltas
		 */
		public <T> Flux<T> bounded(Flux<T> deltas) {
			return deltas.takeUntilOther(this.cut.asMono()).doFinally((signal) -> {
				Graces.Grace grace = this.grace;
				if (grace != null) {
					grace.done();
				}
			});
		}

	}

	/**
	 * The graces of the streams on one scheduler, oldest first: every grace is as long, so the order
	 * they are added in is the order they are due in. One task of the scheduler is armed for the
	 * oldest; a grace whose body ended leaves its place (and lets go of its stream) at once and the
	 * queue when the task next wakes, which cuts what is due and arms for the next. So a streamed call
	 * whose body ends right after its last event, as nearly every one does, sets no task of its own.
	 * Lock-free: a grace is queued before the armed flag is read, and the flag is cleared before the
	 * queue is read when the task wakes, so one of the two sees the other (two tasks may be armed at
	 * once, never more).
	 */
	static final class Graces {

		private static final long GRACE_NANOS = StreamEnd.GRACE.toNanos();

		/** The graces of the scheduler used last (virtual time in tests may change it). */
		private static volatile @Nullable Graces last;

		private final Scheduler scheduler;

		private final ConcurrentLinkedQueue<Grace> queue = new ConcurrentLinkedQueue<>();

		private final AtomicBoolean armed = new AtomicBoolean();

		private final Runnable wake = this::wake;

		private final AtomicLong tasks = new AtomicLong();

		private Graces(Scheduler scheduler) {
			this.scheduler = scheduler;
		}

		static Graces on(Scheduler scheduler) {
			Graces graces = last;
			if (graces == null || graces.scheduler != scheduler) {
				graces = new Graces(scheduler);
				last = graces;
			}
			return graces;
		}

		Grace add(Sinks.Empty<Void> cut) {
			Grace grace = new Grace(cut, this.scheduler.now(TimeUnit.NANOSECONDS) + GRACE_NANOS);
			this.queue.add(grace);
			if (this.armed.compareAndSet(false, true)) {
				arm(GRACE_NANOS);
			}
			return grace;
		}

		// the graces not yet cut nor ended, for tests
		int waiting() {
			return (int) this.queue.stream().filter((grace) -> grace.cut != null).count();
		}

		// the tasks armed on the scheduler so far, for tests
		long tasks() {
			return this.tasks.get();
		}

		private void arm(long delayNanos) {
			try {
				this.tasks.incrementAndGet();
				this.scheduler.schedule(this.wake, delayNanos, TimeUnit.NANOSECONDS);
			}
			catch (RejectedExecutionException ex) {
				// the scheduler is shutting down, and its streams with it
				this.armed.set(false);
			}
		}

		private void wake() {
			this.armed.set(false);
			long now = this.scheduler.now(TimeUnit.NANOSECONDS);
			Grace oldest;
			while ((oldest = this.queue.peek()) != null && (oldest.cut == null || oldest.due - now <= 0)) {
				this.queue.poll();
				oldest.expire();
			}
			if (oldest != null && this.armed.compareAndSet(false, true)) {
				arm(Math.max(0, oldest.due - now));
			}
		}

		/** One stream's grace. */
		static final class Grace {

			private volatile Sinks.@Nullable Empty<Void> cut;

			private final long due;

			private Grace(Sinks.Empty<Void> cut, long due) {
				this.cut = cut;
				this.due = due;
			}

			// the body ended (or the stream was cancelled): nothing to cut
			void done() {
				this.cut = null;
			}

			private void expire() {
				Sinks.Empty<Void> cut = this.cut;
				this.cut = null;
				if (cut != null) {
					cut.tryEmitEmpty();
				}
			}

		}

	}

}
