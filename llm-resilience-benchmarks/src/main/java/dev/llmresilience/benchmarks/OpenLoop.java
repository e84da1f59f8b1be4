package dev.llmresilience.benchmarks;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntPredicate;

import dev.llmresilience.benchmarks.Peers.Peer;

/**
 * Open-loop traffic for blocking peers: a request arrives every interval whatever happened to the
 * ones before it, each on its own application thread, and its wait is measured from its scheduled
 * arrival (so a stall of the machine or of the client shows in the waits).
 */
final class OpenLoop {

	private OpenLoop() {
	}

	/**
	 * What one run measured.
	 * @param scheduled each request's scheduled arrival, on {@link System#nanoTime()}'s clock
	 * @param waits each request's wait from its arrival to its answer (or error)
	 * @param answered whether each request got an answer
	 * @param finished whether every request ended within the grace period
	 */
	record Result(long[] scheduled, long[] waits, boolean[] answered, boolean finished) {

		long answeredCount() {
			long count = 0;
			for (boolean one : this.answered) {
				count += one ? 1 : 0;
			}
			return count;
		}

	}

	/**
	 * Send the requests.
	 * @param peer who sends them
	 * @param requests how many
	 * @param intervalNanos the time between two arrivals
	 * @param graceSeconds how long to wait for the last answers
	 * @return the waits and answers
	 */
	static Result run(Peer peer, int requests, long intervalNanos, long graceSeconds) throws InterruptedException {
		return run((index) -> peer.call(), requests, intervalNanos, graceSeconds);
	}

	/**
	 * Send the requests, each made by its index.
	 * @param call makes the request of an index, and answers whether it got an answer
	 * @param requests how many
	 * @param intervalNanos the time between two arrivals
	 * @param graceSeconds how long to wait for the last answers
	 * @return the waits and answers
	 */
	static Result run(IntPredicate call, int requests, long intervalNanos, long graceSeconds)
			throws InterruptedException {
		long[] scheduled = new long[requests];
		long[] waits = new long[requests];
		boolean[] answered = new boolean[requests];
		ExecutorService callers = Executors.newCachedThreadPool();
		long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
		for (int i = 0; i < requests; i++) {
			long target = start + i * intervalNanos;
			scheduled[i] = target;
			for (long now = System.nanoTime(); now < target; now = System.nanoTime()) {
				LockSupport.parkNanos(target - now);
			}
			int index = i;
			callers.execute(() -> {
				boolean ok = call.test(index);
				waits[index] = System.nanoTime() - target;
				answered[index] = ok;
			});
		}
		callers.shutdown();
		boolean finished = callers.awaitTermination(graceSeconds, TimeUnit.SECONDS);
		callers.shutdownNow();
		return new Result(scheduled, waits, answered, finished);
	}

}
