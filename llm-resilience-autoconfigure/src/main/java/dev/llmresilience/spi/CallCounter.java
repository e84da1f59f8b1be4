package dev.llmresilience.spi;


/**
 * Counts the upstream calls of the call-volume guard's window and decides, on the caller's thread
 * and without waiting on anything remote, whether one more may go ahead. {@code CallVolumeGuard}
 * uses a local counter unless it is given another; {@code llm.shared-state.type=redis} gives it one
 * that counts the whole fleet's calls.
 */
public interface CallCounter {

	/**
	 * Take one permit. Must not block.
	 * @return true if the call may go ahead
	 */
	boolean tryAcquire();

	/**
	 * Calls made in the current window (the fleet's, for a shared counter, as last reconciled).
	 * @return the count
	 */
	int callsThisWindow();

	/**
	 * Whether the current window is spent, so that calls are being refused.
	 * @return true if no more calls are allowed in this window
	 */
	boolean isExhausted();

}
