package dev.llmresilience.gateway;

import java.time.Duration;

/**
 * The gateway's own settings.
 *
 * @param deadline longest a whole call may take
 * @param busyMessage content of a BUSY answer
 * @param contentFilteredMessage content of the answer when content filters blocked the request
 * @param busyAsError raise {@link dev.llmresilience.failure.LlmUnavailableException} instead of answering BUSY
 */
public record GatewaySettings(Duration deadline, String busyMessage, String contentFilteredMessage,
		boolean busyAsError) {
}
