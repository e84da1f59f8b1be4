package dev.llmresilience.engine;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The gateway's own settings.
 *
 * @param deadline longest a whole call may take; for a stream, longest until its first chunk
 * @param busyMessage content of a BUSY answer
 * @param contentFilteredMessage content of the answer when content filters blocked the request
 * @param busyAsError raise {@link dev.llmresilience.failure.LlmUnavailableException} instead of answering BUSY
 * @param deferredMessage content of a DEFERRED answer
 * @param resumeOnFallback after a stream broke mid-answer, continue it on the route's next endpoint
 * instead of raising {@link dev.llmresilience.failure.LlmStreamInterruptedException}
 * @param maxRequestTimeout longest {@code timeout} a request may set, or {@code null} for no ceiling
 * @param maxRequestDeadline longest {@code deadline} a request may set, or {@code null} for no ceiling
 */
record GatewaySettings(Duration deadline, String busyMessage, String contentFilteredMessage,
		boolean busyAsError, String deferredMessage, boolean resumeOnFallback, @Nullable Duration maxRequestTimeout,
		@Nullable Duration maxRequestDeadline) {

	/**
	 * Settings with no ceiling on the timeout and deadline a request may set.
	 * @param deadline longest a whole call may take; for a stream, longest until its first chunk
	 * @param busyMessage content of a BUSY answer
	 * @param contentFilteredMessage content of the answer when content filters blocked the request
	 * @param busyAsError raise {@link dev.llmresilience.failure.LlmUnavailableException} instead of answering BUSY
	 * @param deferredMessage content of a DEFERRED answer
	 * @param resumeOnFallback after a stream broke mid-answer, continue it on the route's next endpoint
	 */
	public GatewaySettings(Duration deadline, String busyMessage, String contentFilteredMessage, boolean busyAsError,
			String deferredMessage, boolean resumeOnFallback) {
		this(deadline, busyMessage, contentFilteredMessage, busyAsError, deferredMessage, resumeOnFallback, null, null);
	}

	/**
	 * Settings with the default messages, BUSY as an answer, no stream resume and no ceilings.
	 * @param deadline longest a whole call may take
	 * @return the settings
	 */
	public static GatewaySettings of(Duration deadline) {
		return new GatewaySettings(deadline, "The service is busy right now. Please try again in a minute.",
				"The request was blocked by the provider's content filter. Please rephrase it.", false,
				"Your request is queued and will be answered shortly.", false);
	}

}
