package dev.llmresilience.redis;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Whether Redis is reachable, since when it is not and why, with one WARN when an outage starts
 * and one when it ends (never one per failed command).
 */
final class RedisAvailability {

	private static final Log logger = LogFactory.getLog(RedisFleet.class);

	/** Reactor's {@code block(Duration)} timing out: "Timeout on blocking read for 250000000 NANOSECONDS". */
	private static final Pattern BLOCKING_TIMEOUT = Pattern.compile("Timeout on blocking read for (\\d+) (NANOSECONDS|MICROSECONDS|MILLISECONDS|SECONDS)");

	/** Reactor's {@code timeout(Duration)}: "Did not observe any item or terminal signal within 250ms in ...". */
	private static final Pattern OPERATOR_TIMEOUT = Pattern.compile("Did not observe any item or terminal signal within (\\d+)ms.*");

	private final Clock clock;

	private boolean available;

	private boolean warned;

	private @Nullable Instant unavailableSince;

	private @Nullable String problem = "not connected yet";

	private boolean closed;

	RedisAvailability(Clock clock) {
		this.clock = clock;
		this.unavailableSince = clock.instant();
	}

	synchronized boolean isAvailable() {
		return this.available;
	}

	synchronized @Nullable Instant unavailableSince() {
		return this.unavailableSince;
	}

	synchronized @Nullable String problem() {
		return this.problem;
	}

	/**
	 * Redis answered.
	 * @param connected what to say the first time: where state is shared
	 * @return true if it had been unavailable
	 */
	synchronized boolean up(String connected) {
		if (this.available) {
			return false;
		}
		if (this.warned) {
			Instant since = (this.unavailableSince != null) ? this.unavailableSince : this.clock.instant();
			logger.warn("Shared LLM state on Redis is available again after " + human(Duration.between(since, this.clock.instant()))
					+ ": reconciling this replica's state with the fleet's");
		}
		else {
			logger.info(connected);
		}
		this.available = true;
		this.warned = false;
		this.unavailableSince = null;
		this.problem = null;
		return true;
	}

	/**
	 * A command failed or timed out.
	 * @param error why
	 */
	synchronized void down(Throwable error) {
		if (this.closed) {
			return; // leaving: what fails now is the application's shutdown, not an outage
		}
		if (this.available || this.unavailableSince == null) {
			this.unavailableSince = this.clock.instant();
		}
		this.available = false;
		this.problem = describe(error);
		if (!this.warned) {
			this.warned = true;
			logger.warn("Shared LLM state on Redis is unavailable (" + this.problem + "): every replica goes on with its "
					+ "own breakers, guard, budget and deferred queue until Redis answers again; no call waits for it");
		}
	}

	synchronized void close() {
		this.closed = true;
		this.available = false;
	}

	static String describe(Throwable error) {
		Throwable cause = error;
		while (cause.getCause() != null && cause.getCause() != cause) {
			cause = cause.getCause();
		}
		String message = (cause.getMessage() != null) ? cause.getMessage() : "";
		Matcher blocking = BLOCKING_TIMEOUT.matcher(message);
		if (blocking.matches()) {
			TimeUnit unit = TimeUnit.valueOf(blocking.group(2));
			return "no answer within " + human(Duration.of(Long.parseLong(blocking.group(1)), unit.toChronoUnit()));
		}
		Matcher operator = OPERATOR_TIMEOUT.matcher(message);
		if (operator.matches()) {
			return "no answer within " + human(Duration.ofMillis(Long.parseLong(operator.group(1))));
		}
		return cause.getClass().getSimpleName() + (message.isEmpty() ? "" : ": " + message);
	}

	/**
	 * A duration as people write it: {@code 250 ms}, {@code 4 s}, {@code 1 min 4 s}, {@code 2 h 5 min}
	 * (seconds rounded down past a second, as a WARN needs no more).
	 */
	static String human(Duration duration) {
		long millis = duration.toMillis();
		if (millis < 1000) {
			return millis + " ms";
		}
		long seconds = duration.toSeconds();
		if (seconds < 60) {
			return seconds + " s";
		}
		long minutes = seconds / 60;
		if (minutes < 60) {
			return minutes + " min" + ((seconds % 60 != 0) ? " " + (seconds % 60) + " s" : "");
		}
		return (minutes / 60) + " h" + ((minutes % 60 != 0) ? " " + (minutes % 60) + " min" : "");
	}

}
