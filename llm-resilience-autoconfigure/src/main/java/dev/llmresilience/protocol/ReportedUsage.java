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
 * them does not flood the log.
 */
final class ReportedUsage {

	/** The largest count believed. */
	static final long MAX_TOKENS = 10_000_000;

	private static final Log logger = LogFactory.getLog(ReportedUsage.class);

	private final String endpoint;

	private final AtomicBoolean warned = new AtomicBoolean();

	ReportedUsage(String endpoint) {
		this.endpoint = endpoint;
	}

	@Nullable Usage read(OpenAiChatCompletion.@Nullable Usage usage) {
		if (usage == null) {
			return null;
		}
		Integer prompt = count("prompt_tokens", usage.promptTokens());
		Integer completion = count("completion_tokens", usage.completionTokens());
		return (prompt == null && completion == null) ? null : new Usage(prompt, completion);
	}

	private @Nullable Integer count(String field, @Nullable Long value) {
		if (value == null) {
			return null;
		}
		if (value < 0 || value > MAX_TOKENS) {
			if (this.warned.compareAndSet(false, true)) {
				logger.warn("Endpoint '" + this.endpoint + "' reported " + field + "=" + value
						+ ", which cannot be right (a count is 0 to " + MAX_TOKENS + "): it is ignored and not priced. "
						+ "Only the first such count of this endpoint is logged.");
			}
			return null;
		}
		return value.intValue();
	}

}
