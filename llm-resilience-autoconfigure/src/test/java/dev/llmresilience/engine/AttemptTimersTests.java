package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.scheduler.VirtualTimeScheduler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link AttemptTimers}: each timer runs when it is due and not before, a disposed one never runs
 * and leaves the queue at once, a task that fails does not stop the others due with it, and under
 * threads setting and disposing timers at once none is lost.
 */
class AttemptTimersTests {

	private static final long DISPOSED_DUE_MILLIS = 500;

	private final VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();

	private final AttemptTimers timers = AttemptTimers.on(this.scheduler);

	private final List<String> ran = new CopyOnWriteArrayList<>();

	@Test
	void timersRunWhenDueInTheOrderTheyAreDue() {
		schedule("late", 300);
		schedule("early", 100);
		schedule("middle", 200);
		advance(99);
		assertThat(this.ran).isEmpty();
		advance(1);
		assertThat(this.ran).containsExactly("early");
		advance(200);
		assertThat(this.ran).containsExactly("early", "middle", "late");
		assertThat(this.timers.pending()).isZero();
	}

	@Test
	void disposedTimerNeverRunsAndTheOthersStillDo() {
		Disposable first = schedule("first", 100);
		schedule("second", 200);
		first.dispose();
		assertThat(first.isDisposed()).isTrue();
		assertThat(this.timers.pending()).as("the disposed timer left the queue").isOne();
		advance(100);
		assertThat(this.ran).isEmpty();
		advance(100);
		assertThat(this.ran).containsExactly("second");
	}

	@Test
	void failingTaskDoesNotStopTheOthersDueWithIt() {
		this.timers.schedule(() -> {
			throw new IllegalStateException("failed");
		}, at(100));
		schedule("after", 100);
		schedule("later", 200);
		assertThatThrownBy(() -> advance(100)).as("the failure, thrown to the scheduler once the others ran")
			.hasMessage("failed");
		assertThat(this.ran).containsExactly("after");
		// (virtual time stops draining after a task threw: the later timer is only seen to be queued)
		assertThat(this.timers.pending()).as("the later timer, still queued").isOne();
	}

	@Test
	void timersSetAndDisposedFromManyThreadsAreNeitherLostNorRunWhenDisposed() throws InterruptedException {
		Scheduler real = Schedulers.newParallel("attempt-timers-test", 2);
		try {
			AttemptTimers timers = AttemptTimers.on(real);
			int threads = 4;
			int each = 5_000;
			AtomicInteger kept = new AtomicInteger();
			AtomicInteger ranKept = new AtomicInteger();
			AtomicInteger ranDisposed = new AtomicInteger();
			CountDownLatch allRan = new CountDownLatch(threads * each / 2);
			CountDownLatch started = new CountDownLatch(threads);
			List<Thread> workers = new CopyOnWriteArrayList<>();
			for (int t = 0; t < threads; t++) {
				Thread worker = new Thread(() -> {
					started.countDown();
					for (int i = 0; i < each; i++) {
						long now = real.now(TimeUnit.NANOSECONDS);
						if (i % 2 == 0) {
							long at = now + TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandom.current().nextInt(0, 20));
							kept.incrementAndGet();
							timers.schedule(() -> {
								ranKept.incrementAndGet();
								allRan.countDown();
							}, at);
						}
						else {
							// due well after it is disposed, so that it cannot have run before
							long at = now + TimeUnit.MILLISECONDS.toNanos(DISPOSED_DUE_MILLIS);
							timers.schedule(ranDisposed::incrementAndGet, at).dispose();
						}
					}
				});
				workers.add(worker);
				worker.start();
			}
			for (Thread worker : workers) {
				worker.join();
			}
			// a generous bound: each timer is due within 20 ms of being set
			assertThat(allRan.await(30, TimeUnit.SECONDS)).as("every timer kept ran").isTrue();
			assertThat(ranKept.get()).isEqualTo(kept.get());
			Thread.sleep(DISPOSED_DUE_MILLIS + 100);
			assertThat(ranDisposed.get()).as("disposed timers that ran").isZero();
			assertThat(timers.pending()).isZero();
		}
		finally {
			real.dispose();
		}
	}

	private Disposable schedule(String name, long millis) {
		return this.timers.schedule(() -> this.ran.add(name), at(millis));
	}

	private long at(long millis) {
		return this.scheduler.now(TimeUnit.NANOSECONDS) + Duration.ofMillis(millis).toNanos();
	}

	private void advance(long millis) {
		this.scheduler.advanceTimeBy(Duration.ofMillis(millis));
	}

}
