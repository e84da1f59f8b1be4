package dev.llmresilience.engine;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.scheduler.Schedulers;

/**
 * A 401, 403 or 404 means an endpoint is misconfigured, which an operator must fix: it is said at
 * WARN, but at most once a minute per endpoint, since every call would otherwise repeat it.
 */
final class ConfigurationWarnings {

	private static final Log logger = LogFactory.getLog(DefaultLlmGateway.class);

	private static final long INTERVAL = Duration.ofMinutes(1).toNanos();

	private final Map<String, Long> last = new ConcurrentHashMap<>();

	void warn(String endpoint, Throwable error) {
		long now = Schedulers.parallel().now(TimeUnit.NANOSECONDS);
		Long previous = this.last.get(endpoint);
		if (previous == null || now - previous >= INTERVAL) {
			this.last.put(endpoint, now);
			logger.warn("Endpoint '" + endpoint + "' looks misconfigured (check its api-key, model and base-url); "
					+ "falling back: " + error.getMessage());
		}
	}

}
