package dev.llmresilience.redis;

import java.time.Clock;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.llmresilience.redis.RedisSharedState.RedisSettings;
import dev.llmresilience.spi.SharedState;
import io.lettuce.core.RedisCommandExecutionException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * This replica's seat in the fleet: the application's Redis connection, the key prefix, a
 * heartbeat that tells the others this replica is alive and tells it whether Redis is reachable,
 * and one pub/sub channel for the fleet's messages.
 *
 * <p>Every command is sent from this class's own thread with a short timeout: Lettuce connects
 * synchronously the first time a connection is used, and a call must never wait on that. A command
 * that times out or loses its connection has the {@link RedisHeartbeat} check Redis at once; a
 * heartbeat that fails twice makes Redis unavailable (one WARN per outage). While it is, the parts
 * that share state send nothing and go on locally, and only the heartbeat tries Redis. When a
 * heartbeat gets through again, the pub/sub subscription is made anew and every part reconciles
 * its state.
 */
final class RedisFleet implements SharedState, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisFleet.class);

	private final ReactiveStringRedisTemplate redis;

	private final RedisSettings settings;

	private final RedisAvailability availability;

	private final RedisMessages messages;

	/** Where commands are sent from: may block on Lettuce's first connect, which a call must never. */
	private final Scheduler scheduler = thread("llm-shared-state");

	private final RedisHeartbeat heartbeat;

	/**
	 * Create the seat; {@link #start()} takes it.
	 * @param connectionFactory the application's reactive Redis connection factory
	 * @param settings the prefix, timeouts and this replica's name
	 * @param clock the clock of the status's timestamps
	 */
	public RedisFleet(ReactiveRedisConnectionFactory connectionFactory, RedisSettings settings, Clock clock) {
		this.redis = new ReactiveStringRedisTemplate(connectionFactory);
		this.settings = settings;
		this.availability = new RedisAvailability(clock);
		this.messages = new RedisMessages(connectionFactory, key("events"));
		this.heartbeat = new RedisHeartbeat(this.redis, settings, key("replicas"), this.availability, this.messages);
	}

	/**
	 * A key under the prefix.
	 * @param suffix what follows the prefix
	 * @return the key
	 */
	public String key(String suffix) {
		return this.settings.keyPrefix() + suffix;
	}

	String channel() {
		return key("events");
	}

	RedisSettings settings() {
		return this.settings;
	}

	ReactiveStringRedisTemplate redis() {
		return this.redis;
	}

	/**
	 * This replica's name in Redis.
	 * @return the name
	 */
	public String replica() {
		return this.settings.replica();
	}

	/**
	 * Whether Redis answered the last heartbeat and no command has failed since.
	 * @return true while state is shared
	 */
	public boolean isAvailable() {
		return this.availability.isAvailable();
	}

	/**
	 * Replicas alive at the last heartbeat.
	 * @return at least 1
	 */
	int replicas() {
		return this.heartbeat.replicas();
	}

	/**
	 * Run commands on this class's thread, bounded by the command timeout; a failure marks Redis
	 * unavailable and reaches the subscriber as an error.
	 * @param <T> the result's type
	 * @param commands the commands
	 * @return their result
	 */
	<T> Mono<T> command(Supplier<Mono<T>> commands) {
		return Mono.defer(commands)
			.subscribeOn(this.scheduler)
			.timeout(this.settings.timeout())
			.doOnError(this::failed);
	}

	/**
	 * A command failed: an error Redis answered with says it is reachable; a timeout or a lost
	 * connection is checked by a heartbeat at once, and only a failed heartbeat makes Redis
	 * unavailable (so that one slow command, as on a cold start, does not flap the state).
	 */
	private void failed(Throwable error) {
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			if (cause instanceof RedisCommandExecutionException) {
				logger.debug("Redis refused a command: " + cause.getMessage());
				return;
			}
		}
		this.heartbeat.check();
	}

	/**
	 * Run a script; see {@link #command(Supplier)}.
	 * @param <T> the result's type
	 * @param script the script
	 * @param keys its keys
	 * @param args its arguments
	 * @return its result
	 */
	<T> Mono<T> script(RedisScript<T> script, List<String> keys, Object... args) {
		List<String> argv = Arrays.stream(args).map(String::valueOf).toList();
		return command(() -> this.redis.execute(script, keys, argv).next());
	}

	/**
	 * Hear the fleet's messages of one kind (published as {@code kind|payload} on the channel).
	 * @param kind the kind
	 * @param handler receives the payload
	 */
	void onMessage(String kind, Consumer<String> handler) {
		this.messages.on(kind, handler);
	}

	/**
	 * Reconcile a part's state each time sharing starts or resumes (the heartbeat waits for it, up
	 * to two command timeouts, so that a replica that starts shares the fleet's state from its first
	 * call).
	 * @param reconciler the part's reconciliation, done when its Mono completes
	 */
	void whenAvailable(Supplier<Mono<?>> reconciler) {
		this.heartbeat.whenAvailable(reconciler);
	}

	/**
	 * Run a part's periodic task after each heartbeat that reached Redis, on the heartbeat's thread.
	 * @param task the task
	 */
	void everyHeartbeat(Runnable task) {
		this.heartbeat.everyHeartbeat(task);
	}

	/**
	 * Take the seat: a first heartbeat (waited for a few seconds at most, so that a replica that
	 * starts with Redis reachable shares from its first call), then one each {@code heartbeat}.
	 */
	public void start() {
		this.heartbeat.start();
	}

	@Override
	public SharedState.Status status() {
		return new SharedState.Status("redis", isAvailable(), replica(), replicas(),
				this.availability.unavailableSince(), this.availability.problem());
	}

	/**
	 * Leave the fleet: the heartbeat stops and this replica is marked gone at once, so that the
	 * others take over its deferred requests without waiting out {@code replica-timeout}.
	 */
	@Override
	public void close() {
		this.heartbeat.stop();
		this.messages.close();
		boolean available = isAvailable();
		this.availability.close();
		if (available) {
			try {
				// sent from this fleet's own thread: a driver wedged on its connection (a writer lock
				// that never frees, lettuce#3880) then holds that thread, not the one closing the context
				this.redis.opsForZSet().add(key("replicas"), replica(), 0).subscribeOn(this.scheduler)
					.block(this.settings.timeout());
			}
			catch (RuntimeException ex) {
				logger.debug("Could not mark replica '" + replica() + "' gone: " + ex);
			}
		}
		this.scheduler.dispose();
	}

	private static Scheduler thread(String name) {
		return Schedulers.fromExecutorService(Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		}), name);
	}

}
