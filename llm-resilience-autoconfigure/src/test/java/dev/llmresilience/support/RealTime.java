package dev.llmresilience.support;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Waiting in real time for what a test in virtual time cannot move: a local server's answer, a
 * replica's event. Bounded generously (30 s), since a loaded machine is slow; the bound is a
 * failure, not a pass.
 */
public final class RealTime {

	private static final long BOUND = TimeUnit.SECONDS.toNanos(30);

	private RealTime() {
	}

	/**
	 * Wait until the condition holds.
	 * @param condition what the test waits for (it may throw an assertion error to fail at once)
	 * @throws AssertionError when it does not hold within 30 s
	 */
	public static void until(BooleanSupplier condition) {
		if (!within(condition)) {
			throw new AssertionError("Not settled within 30 s");
		}
	}

	/**
	 * Wait until the condition holds, or 30 s have passed.
	 * @param condition what the test waits for
	 * @return whether it held
	 */
	public static boolean within(BooleanSupplier condition) {
		long by = System.nanoTime() + BOUND;
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > by) {
				return false;
			}
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new AssertionError(ex);
			}
		}
		return true;
	}

}
