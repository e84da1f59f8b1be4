package dev.llmresilience.protocol;

import java.util.concurrent.atomic.AtomicBoolean;

import dev.llmresilience.chat.Usage;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The token counts one endpoint's provider reports, checked before they are priced: a count below 0
 * would lower the day's spend, and one above {@value #MAX_TOKENS} (more than any model's context
 * window) would spend the budget with one answer. Such a count is ignored (as if not reported), and
 * the first one is logged at WARN; later ones are ignored silently, so a provider that always sends
 * them does not flood the log. Every protocol's client uses one.
 */
public final class ReportedUsage {

	/** The largest count believed. */
	public static final long MAX_TOKENS = 10_000_000;

	private static final Log logger = LogFactory.getLog(ReportedUsage.class);

	private final String endpoint;

	private final AtomicBoolean warned = new AtomicBoolean();

	/**
	 * Create one for an endpoint.
	 * @param endpoint the endpoint's name, for the warning
	 */
	public ReportedUsage(String endpoint) {
		this.endpoint = endpoint;
	}

	/**
	 * The counts a provider reported, those that cannot be right left out.
	 * @param prompt the prompt (input) tokens, or {@code null}
	 * @param completion the completion (output) tokens, or {@code null}
	 * @return the usage, or {@code null} when neither count is usable
	 */
	public @Nullable Usage read(@Nullable Number prompt, @Nullable Number completion) {
		Integer promptTokens = count("prompt tokens", prompt);
		Integer completionTokens = count("completion tokens", completion);
		return (promptTokens == null && completionTokens == null) ? null : new Usage(promptTokens, completionTokens);
	}

	private @Nullable Integer count(String what, @Nullable Number value) {
		if (value == null) {
			return null;
		}
		long tokens = value.longValue();
		if (tokens < 0 || tokens > MAX_TOKENS) {
			if (this.warned.compareAndSet(false, true)) {
				logger.warn("Endpoint '" + this.endpoint + "' reported " + tokens + " " + what
						+ ", which cannot be right (a count is 0 to " + MAX_TOKENS + "): it is ignored and not priced. "
						+ "Only the first such count of this endpoint is logged.");
			}
			return null;
		}
		return (int) tokens;
	}

}
