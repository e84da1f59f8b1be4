package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.test.scheduler.VirtualTimeScheduler;
import reactor.util.context.Context;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@link AttemptWatchdog} leaves once an attempt has ended, and what it passes through while it
 * runs: no timer of the attempt still queued however the attempt ended (each would hold the attempt
 * until its bound, a minute for the default timeout, on every call), the scheduler armed once, not
 * once a call, by attempts that end before their bound (each arming wakes the scheduler's thread),
 * chunks that arrive after the end handed to
 * the subscriber's discard hook (where pooled buffers are freed), the subscriber's demand passed
 * upstream as asked, and a stream with no idle bound never ended by one however late on the clock.
 */
class AttemptWatchdogEndTests {

	private static final long NONE = Long.MAX_VALUE;

	private final VirtualTimeScheduler virtualTime = VirtualTimeScheduler.create();

	private final TimerCount scheduler = new TimerCount(this.virtualTime);

	private final List<String> signals = new CopyOnWriteArrayList<>();

	private final List<Object> discarded = new CopyOnWriteArrayList<>();

	private final List<Long> requested = new CopyOnWriteArrayList<>();

	private final AtomicInteger cancels = new AtomicInteger();

	@ParameterizedTest
	@ValueSource(strings = { "complete", "error", "cancel", "release" })
	void attemptThatEndedLeavesNoTimerScheduled(String end) {
		AttemptWatchdog<String> watchdog = subscribed(millis(60_000), millis(60_000), NONE, NONE);
		assertThat(watchdog.timers().pending()).as("the first-token bound is set").isOne();
		assertThat(this.scheduler.pending()).as("and armed").isOne();
		switch (end) {
			case "complete" -> watchdog.onComplete();
			case "error" -> watchdog.onError(new IllegalStateException("upstream"));
			case "cancel" -> watchdog.cancel();
			default -> assertThat(watchdog.release()).isTrue();
		}
		assertThat(watchdog.timers().pending()).as("no timer outlives the attempt").isZero();
	}

	@Test
	void attemptThatEndedAfterItsFirstTokenLeavesNoTimerScheduled() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), millis(60_000), millis(60_000), NONE);
		watchdog.onNext("token");
		advance(100);
		assertThat(watchdog.timers().pending()).as("asleep until the idle bound").isOne();
		watchdog.onComplete();
		assertThat(watchdog.timers().pending()).isZero();
	}

	@Test
	void attemptsThatEndBeforeTheirBoundArmTheSchedulerOnce() {
		for (int i = 0; i < 100; i++) {
			AttemptWatchdog<String> watchdog = subscribed(millis(60_000), NONE, NONE, NONE);
			watchdog.onNext("token");
			watchdog.onComplete();
			assertThat(watchdog.timers().pending()).isZero();
			advance(1);
		}
		assertThat(this.scheduler.scheduled()).as("tasks given to the scheduler for 100 calls").isOne();
	}

	@Test
	void boundsAfterAnAttemptThatEndedStillEndTheirAttemptsOnTime() {
		AttemptWatchdog<String> ended = subscribed(millis(60_000), NONE, NONE, NONE);
		ended.onComplete();
		advance(10);
		subscribed(millis(60_000), NONE, NONE, NONE);
		AttemptWatchdog<String> sooner = subscribed(millis(100), NONE, NONE, NONE);
		advance(99);
		assertThat(this.signals).containsExactly("subscribed", "complete", "subscribed", "subscribed");
		advance(1);
		assertThat(this.signals).as("the sooner bound, armed for itself").endsWith("error FIRST_TOKEN");
		// the task armed for the attempt that ended wakes at 60 s, finds nothing due and arms the next
		advance(60_010 - 110 - 1);
		assertThat(this.signals).as("the later one, not before its bound").hasSize(5);
		advance(1);
		assertThat(this.signals).as("and at it").hasSize(6).endsWith("error FIRST_TOKEN");
		assertThat(sooner.timers().pending()).isZero();
	}

	@Test
	void chunkArrivingAfterTheAttemptEndedGoesToTheDiscardHook() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), NONE, NONE, NONE);
		advance(100);
		assertThat(this.signals).containsExactly("subscribed", "error FIRST_TOKEN");
		watchdog.onNext("token late");
		assertThat(this.signals).hasSize(2);
		assertThat(this.discarded).containsExactly("token late");
	}

	@ParameterizedTest
	@ValueSource(strings = { "release", "first token", "complete" })
	void attemptCancelledAfterItEndedCancelsTheUpstreamCallOnceAtMost(String end) {
		// the breaker's opening releases a waiting attempt on another thread while its caller cancels it
		AttemptWatchdog<String> watchdog = subscribed(millis(100), NONE, NONE, NONE);
		switch (end) {
			case "release" -> assertThat(watchdog.release()).isTrue();
			case "first token" -> advance(100);
			default -> watchdog.onComplete();
		}
		int cancelledByTheEnd = this.cancels.get();
		watchdog.cancel();
		assertThat(this.cancels.get()).as("upstream cancels").isEqualTo(cancelledByTheEnd).isLessThanOrEqualTo(1);
	}

	@Test
	void attemptCancelledWhileRunningCancelsTheUpstreamCall() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), NONE, NONE, NONE);
		watchdog.cancel();
		watchdog.cancel();
		assertThat(this.cancels.get()).as("upstream cancels").isOne();
	}

	@Test
	void demandIsPassedUpstreamAsAsked() {
		AttemptWatchdog<String> watchdog = subscribed(NONE, NONE, NONE, NONE);
		watchdog.request(3);
		watchdog.request(1);
		assertThat(this.requested).containsExactly(3L, 1L);
	}

	@Test
	void streamWithNoIdleBoundIsNeverEndedByOneLateOnTheClock() {
		advance(Duration.ofDays(1).toMillis());
		AttemptWatchdog<String> watchdog = subscribed(millis(100), NONE, NONE, NONE);
		advance(50);
		watchdog.onNext("token");
		// the timer armed for the first-token bound wakes and finds no bound left to sleep until
		advance(Duration.ofDays(365).toMillis());
		watchdog.onComplete();
		assertThat(this.signals).containsExactly("subscribed", "next token", "complete");
		assertThat(watchdog.timers().pending()).isZero();
	}

	private AttemptWatchdog<String> subscribed(long firstTokenBy, long idleBy, long attemptBy, long deadline) {
		long idleNanos = (idleBy != NONE) ? idleBy - now() : NONE;
		AttemptWatchdog<String> watchdog = new AttemptWatchdog<>(recording(), this.scheduler,
				new AttemptWatchdog.Bounds(firstTokenBy, idleNanos, attemptBy, deadline, deadline),
				(chunk) -> chunk.startsWith("token"),
				(expiry) -> new IllegalStateException(expiry.name()));
		watchdog.onSubscribe(new Subscription() {

			@Override
			public void request(long n) {
				AttemptWatchdogEndTests.this.requested.add(n);
			}

			@Override
			public void cancel() {
				AttemptWatchdogEndTests.this.cancels.incrementAndGet();
			}

		});
		return watchdog;
	}

	private long now() {
		return this.virtualTime.now(TimeUnit.NANOSECONDS);
	}

	private long millis(long millis) {
		return now() + Duration.ofMillis(millis).toNanos();
	}

	private void advance(long millis) {
		this.virtualTime.advanceTimeBy(Duration.ofMillis(millis));
	}

	private CoreSubscriber<String> recording() {
		List<String> signals = this.signals;
		Context context = Operators.enableOnDiscard(Context.empty(), this.discarded::add);
		return new CoreSubscriber<>() {

			@Override
			public Context currentContext() {
				return context;
			}

			@Override
			public void onSubscribe(Subscription subscription) {
				signals.add("subscribed");
			}

			@Override
			public void onNext(String chunk) {
				signals.add("next " + chunk);
			}

			@Override
			public void onError(Throwable error) {
				signals.add("error " + error.getMessage());
			}

			@Override
			public void onComplete() {
				signals.add("complete");
			}

		};
	}

	/** Virtual time that counts the timers scheduled and neither run nor disposed. */
	private static final class TimerCount implements Scheduler {

		private final VirtualTimeScheduler delegate;

		private final Set<Object> pending = ConcurrentHashMap.newKeySet();

		private final AtomicInteger scheduled = new AtomicInteger();

		TimerCount(VirtualTimeScheduler delegate) {
			this.delegate = delegate;
		}

		int pending() {
			return this.pending.size();
		}

		int scheduled() {
			return this.scheduled.get();
		}

		@Override
		public Disposable schedule(Runnable task) {
			return schedule(task, 0, TimeUnit.NANOSECONDS);
		}

		@Override
		public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
			Object timer = new Object();
			this.scheduled.incrementAndGet();
			Set<Object> pending = this.pending;
			pending.add(timer);
			Disposable scheduled = this.delegate.schedule(() -> {
				pending.remove(timer);
				task.run();
			}, delay, unit);
			return () -> {
				pending.remove(timer);
				scheduled.dispose();
			};
		}

		@Override
		public long now(TimeUnit unit) {
			return this.delegate.now(unit);
		}

		@Override
		public Worker createWorker() {
			return this.delegate.createWorker();
		}

	}

}
