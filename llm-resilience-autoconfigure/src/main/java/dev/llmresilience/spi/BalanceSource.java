package dev.llmresilience.spi;

import java.util.SplittableRandom;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import reactor.core.scheduler.Schedulers;

/**
 * Where the {@code RouteBalancer} takes chance and time from: the random numbers of its weighted
 * and two-choice draws, and the clock its latency estimates decay by. A bean of this type replaces
 * the default ({@link #system()}), e.g. with {@link #seeded(long, LongSupplier)} for a reproducible
 * split.
 */
public interface BalanceSource {

	/**
	 * A random number.
	 * @return uniformly distributed in {@code [0, 1)}
	 */
	double nextDouble();

	/**
	 * The time, for the decay of latency estimates.
	 * @return a monotonic time in nanoseconds
	 */
	long nanoTime();

	/**
	 * {@link ThreadLocalRandom} and the clock of Reactor's parallel scheduler (the one attempts are
	 * timed by).
	 * @return the source
	 */
	static BalanceSource system() {
		return new BalanceSource() {

			@Override
			public double nextDouble() {
				return ThreadLocalRandom.current().nextDouble();
			}

			@Override
			public long nanoTime() {
				return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
			}

		};
	}

	/**
	 * One seeded sequence of random numbers, shared by every thread (so calls contend for it), and the
	 * given clock.
	 * @param seed the seed
	 * @param nanoTime the clock, in nanoseconds
	 * @return the source
	 */
	static BalanceSource seeded(long seed, LongSupplier nanoTime) {
		SplittableRandom random = new SplittableRandom(seed);
		return new BalanceSource() {

			@Override
			public double nextDouble() {
				synchronized (random) {
					return random.nextDouble();
				}
			}

			@Override
			public long nanoTime() {
				return nanoTime.getAsLong();
			}

		};
	}

}
