package dev.llmresilience.gateway;

import java.time.Duration;

/**
 * The gateway's own settings.
 *
 * @param deadline longest a whole call may take; for a stream, longest until its first chunk
 * @param busyMessage content of a BUSY answer
 * @param contentFilteredMessage content of the answer when content filters blocked the request
 * @param busyAsError raise {@link dev.llmresilience.failure.LlmUnavailableException} instead of answering BUSY
 * @param resumeOnFallback after a stream broke mid-answer, continue it on the route's next endpoint
 * instead of raising {@link dev.llmresilience.failure.LlmStreamInterruptedException}
 */
public record GatewaySettings(Duration deadline, String busyMessage, String contentFilteredMessage,
		boolean busyAsError, boolean resumeOnFallback) {

	/**
	 * Settings with {@code resumeOnFallback} off.
	 * @param deadline longest a whole call may take
	 * @param busyMessage content of a BUSY answer
	 * @param contentFilteredMessage content of the answer when content filters blocked the request
	 * @param busyAsError raise an exception instead of answering BUSY
	 */
	public GatewaySettings(Duration deadline, String busyMessage, String contentFilteredMessage, boolean busyAsError) {
		this(deadline, busyMessage, contentFilteredMessage, busyAsError, false);
	}

}
