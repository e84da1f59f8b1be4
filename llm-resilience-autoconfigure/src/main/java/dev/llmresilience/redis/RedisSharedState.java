package dev.llmresilience.redis;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import dev.llmresilience.spi.BreakerControl;
import dev.llmresilience.spi.DeferredStore;
import dev.llmresilience.spi.SharedState;
import dev.llmresilience.spi.SharedState.CallCounter;
import dev.llmresilience.spi.SharedState.CapacityShare;
import dev.llmresilience.spi.SharedState.SpendLedger;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;

/**
 * State shared on Redis ({@code llm.shared-state.type=redis}): the parts it makes use this
 * replica's {@link RedisFleet} seat. It takes the seat when the application context starts and
 * leaves it (giving the guard's unspent permits back first) when the context stops, before the
 * Redis connection factory stops.
 */
public final class RedisSharedState implements SharedState, SmartLifecycle, AutoCloseable {

	private final RedisFleet fleet;

	private final Clock clock;

	private final List<AutoCloseable> parts = new ArrayList<>();

	private @Nullable RedisCapacityShare capacity;

	private boolean running;

	private boolean closed;

	/**
	 * Share state on Redis: a seat in the fleet, taken by {@link #start()}.
	 * @param factory the connection to Redis
	 * @param settings the keys, this replica's name and the fleet's timing
	 * @param clock the clock the guard's windows are aligned to
	 * @return the shared state
	 */
	public static RedisSharedState connect(ReactiveRedisConnectionFactory factory, RedisSettings settings, Clock clock) {
		return new RedisSharedState(new RedisFleet(factory, settings, clock), clock);
	}

	/**
	 * Share state through a seat in the fleet.
	 * @param fleet the seat, taken by {@link #start()}
	 * @param clock the clock the guard's windows are aligned to
	 */
	RedisSharedState(RedisFleet fleet, Clock clock) {
		this.fleet = fleet;
		this.clock = clock;
	}

	/**
	 * This replica's seat.
	 * @return the seat
	 */
	RedisFleet fleet() {
		return this.fleet;
	}

	/**
	 * A key of this fleet: the configured prefix, then the suffix.
	 * @param suffix what follows the prefix, e.g. {@code deferred}
	 * @return the key
	 */
	public String key(String suffix) {
		return this.fleet.key(suffix);
	}

	@Override
	public SharedState.Status status() {
		return this.fleet.status();
	}

	@Override
	public synchronized CallCounter callCounter(int maxCalls, Duration window) {
		RedisCallCounter counter = new RedisCallCounter(this.fleet, maxCalls, window, this.clock);
		this.parts.add(counter);
		return counter;
	}

	@Override
	public synchronized CapacityShare capacity() {
		if (this.capacity == null) {
			this.capacity = new RedisCapacityShare(this.fleet, this.clock);
			this.parts.add(this.capacity);
		}
		return this.capacity;
	}

	@Override
	public SpendLedger spendLedger(BigDecimal maxCostPerDay) {
		return new RedisSpendLedger(this.fleet, maxCostPerDay);
	}

	/** The store is a bean of its own, closed by the application context before this. */
	@Override
	public DeferredStore deferredStore(Duration retention) {
		return new RedisDeferredStore(this.fleet, retention);
	}

	@Override
	public BreakerControl breakers(Collection<CircuitBreaker> breakers) {
		return new RedisBreakers(this.fleet, breakers);
	}

	@Override
	public synchronized void start() {
		if (!this.running && !this.closed) {
			this.fleet.start();
			this.running = true;
		}
	}

	@Override
	public synchronized void stop() {
		close();
	}

	@Override
	public synchronized boolean isRunning() {
		return this.running;
	}

	/** Stop before the connection factory (Spring Data Redis's is a lifecycle bean of phase 0). */
	@Override
	public int getPhase() {
		return SmartLifecycle.DEFAULT_PHASE;
	}

	@Override
	public synchronized void close() {
		if (this.closed) {
			return;
		}
		this.closed = true;
		this.running = false;
		for (AutoCloseable part : this.parts) {
			try {
				part.close();
			}
			catch (Exception ex) {
				// leaving anyway
			}
		}
		this.fleet.close();
	}

	/**
	 * How this replica uses Redis.
	 *
	 * @param keyPrefix the prefix of every key and of the channel
	 * @param replica this replica's name, unique in the fleet
	 * @param timeout the longest wait for one command
	 * @param heartbeat how often this replica tells the others it is alive, and checks Redis
	 * @param replicaTimeout how long a replica may go unheard before the others take over its deferred requests
	 */
	public record RedisSettings(String keyPrefix, String replica, Duration timeout, Duration heartbeat,
			Duration replicaTimeout) {
	}

}
