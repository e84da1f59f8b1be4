package dev.llmresilience.engine;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sliding counts under retry and hedge budgets: no call lost when many threads count at once,
 * across the turn of a slot, and a slot older than the window no longer read.
 */
class SlidingCountsTests {

	private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

	@Test
	void callsCountedByManyThreadsAtOnceAcrossTheTurnOfSlotsAreAllCounted() throws Exception {
		SlidingCounts counts = new SlidingCounts(1000 * SECOND, 1000);
		int threads = 8;
		int each = 1_000_000;
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		CountDownLatch start = new CountDownLatch(1);
		try {
			for (int t = 0; t < threads; t++) {
				pool.execute(() -> {
					try {
						start.await();
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						return;
					}
					for (int i = 0; i < each; i++) {
						// 200 slots of time, each turned by whichever thread comes first
						long now = i / 5000 * SECOND;
						counts.call(now);
						if (i % 10 == 0) {
							counts.extra(now);
						}
					}
				});
			}
			start.countDown();
			pool.shutdown();
			assertThat(pool.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			pool.shutdownNow();
		}
		SlidingCounts.Window window = counts.window(199 * SECOND);
		assertThat(window.calls()).isEqualTo((long) threads * each);
		assertThat(window.extras()).isEqualTo((long) threads * each / 10);
	}

	@Test
	void aSlotOlderThanTheWindowIsNoLongerReadAndItsPlaceIsTakenByTheNewSlot() {
		SlidingCounts counts = new SlidingCounts(10 * SECOND, 10);
		counts.call(0);
		counts.call(5 * SECOND);
		assertThat(counts.window(9 * SECOND).calls()).isEqualTo(2);
		assertThat(counts.window(10 * SECOND).calls()).as("the slot of 0 s has left the window").isOne();
		counts.call(10 * SECOND);
		assertThat(counts.window(10 * SECOND).calls()).isEqualTo(2);
		// a call a whole window late goes to the newer slot in its place, and replaces nothing
		counts.call(0);
		assertThat(counts.window(10 * SECOND).calls()).isEqualTo(3);
	}

}
