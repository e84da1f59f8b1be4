package dev.llmresilience.redis;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

import dev.llmresilience.spi.SharedState.CallCounter;
import dev.llmresilience.spi.SharedState.CapacityShare;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The providers' rate limits as the fleet knows them: an endpoint emptied on one replica (a 429,
 * or headers saying a window is spent) is published on the fleet's channel
 * ({@code capacity|<until, epoch ms>|<endpoint>}) and every replica stops sending to it until
 * then; a configured requests-per-minute and tokens-per-minute are counted fleet-wide, each by a
 * {@link RedisCallCounter} of its own ({@code capacity:<endpoint>},
 * {@code capacity-tokens:<endpoint>}). Publishing never waits: a message Redis does not take
 * (it is unavailable) is lost, and each replica then learns of the limit from its own answers.
 */
final class RedisCapacityShare implements CapacityShare, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisCapacityShare.class);

	private final RedisFleet fleet;

	private final Clock clock;

	private final List<BiConsumer<String, Instant>> listeners = new CopyOnWriteArrayList<>();

	private final List<RedisCallCounter> counters = new CopyOnWriteArrayList<>();

	RedisCapacityShare(RedisFleet fleet, Clock clock) {
		this.fleet = fleet;
		this.clock = clock;
		fleet.onMessage("capacity", this::heard);
	}

	@Override
	public void emptied(String endpoint, Instant until) {
		if (!this.fleet.isAvailable()) {
			return;
		}
		this.fleet.command(() -> this.fleet.redis().convertAndSend(this.fleet.channel(),
				"capacity|" + until.toEpochMilli() + "|" + endpoint))
			.subscribe(null, (error) -> logger.debug("Could not tell the fleet of a rate limit: " + error));
	}

	@Override
	public void onEmptied(BiConsumer<String, Instant> listener) {
		this.listeners.add(listener);
	}

	@Override
	public CallCounter requestsPerMinute(String endpoint, int limit) {
		RedisCallCounter counter = new RedisCallCounter(this.fleet, "capacity:" + endpoint, limit, Duration.ofMinutes(1),
				this.clock);
		this.counters.add(counter);
		return counter;
	}

	/**
	 * The fleet's tokens: taken from Redis a hundredth of the limit at a time (a call's estimate is
	 * often larger; what the stock lacks goes on credit), settled by the usage each answer reports.
	 */
	@Override
	public CallCounter tokensPerMinute(String endpoint, int limit) {
		RedisCallCounter counter = new RedisCallCounter(this.fleet, "capacity-tokens:" + endpoint, limit,
				Duration.ofMinutes(1), this.clock, Math.max(1, limit / 100));
		this.counters.add(counter);
		return counter;
	}

	@Override
	public void close() {
		for (RedisCallCounter counter : this.counters) {
			counter.close();
		}
	}

	private void heard(String payload) {
		int bar = payload.indexOf('|');
		if (bar <= 0) {
			return;
		}
		Instant until = Instant.ofEpochMilli(Long.parseLong(payload.substring(0, bar)));
		String endpoint = payload.substring(bar + 1);
		for (BiConsumer<String, Instant> listener : this.listeners) {
			listener.accept(endpoint, until);
		}
	}

}
