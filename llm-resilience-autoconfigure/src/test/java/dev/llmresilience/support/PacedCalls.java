package dev.llmresilience.support;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.gateway.LlmGateway;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;

import static dev.llmresilience.support.Answers.completion;

/**
 * Calls answered when a test in virtual time says so, so that first-token times are exact: each
 * call's prompt is {@code "call N"}, its {@link Primary} holds it until the test answers it, and
 * {@link #settle(long)} answers every call that is due and waits, in real time, until its answer has
 * arrived and every call sent has reached its primary or been answered. The test moves the virtual
 * clock only after a settle.
 */
public final class PacedCalls {

	/** The latency of a call its primary never answers (it is held until the breaker lets it go). */
	public static final long NEVER = -1;

	private static final Pattern CALL = Pattern.compile("call (\\d+)");

	private final IntFunction<Primary> primaryOf;

	private final Map<Integer, Long> due = new ConcurrentHashMap<>();

	private final Map<Integer, ChatResponse> answers = new ConcurrentHashMap<>();

	private final List<String> errors = new CopyOnWriteArrayList<>();

	private final AtomicInteger next = new AtomicInteger();

	/**
	 * @param primaryOf the primary that call number N goes to
	 */
	public PacedCalls(IntFunction<Primary> primaryOf) {
		this.primaryOf = primaryOf;
	}

	/**
	 * Send the next call.
	 * @param gateway the gateway it goes through
	 * @param now the virtual time, in ms
	 * @param latency when its primary answers it, in ms after now, or {@link #NEVER}
	 * @return its number
	 */
	public int send(LlmGateway gateway, long now, long latency) {
		int id = this.next.getAndIncrement();
		if (latency != NEVER) {
			this.due.put(id, now + latency);
		}
		gateway.chat(ChatRequest.ofUser("call " + id))
			.subscribe((answer) -> this.answers.put(id, answer), (error) -> this.errors.add(id + ": " + error));
		return id;
	}

	/**
	 * Every call sent has reached its primary or been answered; every answer due by now has arrived.
	 * No call may have failed.
	 * @param now the virtual time, in ms
	 */
	public void settle(long now) {
		int sent = this.next.get();
		RealTime.until(() -> {
			if (!this.errors.isEmpty()) {
				throw new AssertionError("calls failed: " + this.errors);
			}
			for (int id = 0; id < sent; id++) {
				if (!this.answers.containsKey(id) && !this.primaryOf.apply(id).arrived(id)) {
					return false;
				}
			}
			return true;
		});
		this.due.forEach((id, at) -> {
			if (at <= now && this.primaryOf.apply(id).arrived(id)) {
				this.primaryOf.apply(id).answer(id);
			}
		});
		RealTime.until(() -> this.due.entrySet()
			.stream()
			.allMatch((entry) -> entry.getValue() > now || this.answers.containsKey(entry.getKey())));
	}

	/** @return how many calls were sent */
	public int sent() {
		return this.next.get();
	}

	/** @return whether its primary was ever to answer the call */
	public boolean isDue(int id) {
		return this.due.containsKey(id);
	}

	/** @return the call's answer, waiting for it in real time */
	public ChatResponse answer(int id) {
		RealTime.until(() -> this.answers.containsKey(id));
		return this.answers.get(id);
	}

	/** @return the call's answer, if it has come */
	public ChatResponse answered(int id) {
		return this.answers.get(id);
	}

	/**
	 * The call number in a request's prompt.
	 * @param request the request
	 * @return its number, or -1
	 */
	public static int idOf(ChatRequest request) {
		return idOf(request.messages().get(0).text());
	}

	private static int idOf(String text) {
		Matcher matcher = CALL.matcher(text);
		return matcher.find() ? Integer.parseInt(matcher.group(1)) : -1;
	}

	/**
	 * A primary: each call held until the test answers it, by the number in its prompt; probes (no
	 * number) answered at once, after a delay of real time, or held until the server closes.
	 */
	public static final class Primary extends Dispatcher {

		private final Set<Integer> arrived = ConcurrentHashMap.newKeySet();

		private final Map<Integer, CountDownLatch> held = new ConcurrentHashMap<>();

		private final AtomicInteger probes = new AtomicInteger();

		private final CountDownLatch closing = new CountDownLatch(1);

		private volatile Duration probeDelay = Duration.ZERO;

		private volatile boolean holdProbes;

		private volatile boolean closed;

		@Override
		public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
			int id = idOf(request.getBody().utf8());
			if (id < 0) {
				this.probes.incrementAndGet();
				if (this.holdProbes) {
					this.closing.await(60, TimeUnit.SECONDS);
				}
				else if (!this.probeDelay.isZero()) {
					Thread.sleep(this.probeDelay.toMillis());
				}
				return completion("probed");
			}
			CountDownLatch latch = latch(id);
			this.arrived.add(id);
			latch.await(60, TimeUnit.SECONDS);
			return completion(this.closed ? "too late" : "from primary " + id);
		}

		/** Probes wait until the server closes. */
		public void holdProbes() {
			this.holdProbes = true;
		}

		/**
		 * Probes are answered after this much real time.
		 * @param delay the delay
		 * @return this primary
		 */
		public Primary probesAnsweredAfter(Duration delay) {
			this.probeDelay = delay;
			return this;
		}

		/** @return the probes this primary received */
		public int probes() {
			return this.probes.get();
		}

		/** @return whether the call has reached this primary */
		public boolean arrived(int id) {
			return this.arrived.contains(id);
		}

		void answer(int id) {
			latch(id).countDown();
		}

		private CountDownLatch latch(int id) {
			return this.held.computeIfAbsent(id, (key) -> new CountDownLatch(1));
		}

		@Override
		public void close() {
			this.closed = true;
			this.closing.countDown();
			this.held.values().forEach(CountDownLatch::countDown);
		}

	}

}
