package dev.llmresilience.shared.redis;

import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.llmresilience.shared.SharedState;
import dev.llmresilience.shared.SharedStateStatus;
import io.lettuce.core.RedisCommandExecutionException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
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
 * <p>Every command runs on this class's own thread with a short timeout: Lettuce connects
 * synchronously the first time a connection is used, and a call must never wait on that. A failed
 * command marks Redis unavailable (one WARN per outage); while it is, the parts that share state
 * send nothing and go on locally, and only the heartbeat tries Redis. When a heartbeat gets through
 * again, the pub/sub subscription is made anew and every part reconciles its state.
 */
public final class RedisFleet implements SharedState, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisFleet.class);

	private static final RedisScript<List> HEARTBEAT = RedisScripts.load("heartbeat", List.class);

	private final ReactiveStringRedisTemplate redis;

	private final RedisSettings settings;

	private final RedisAvailability availability;

	private final RedisMessages messages;

	/** Where commands are sent from: may block on Lettuce's first connect, which a call must never. */
	private final Scheduler scheduler = thread("llm-shared-state");

	/** Where the heartbeat runs: waits for its commands and for the parts' reconciliation. */
	private final ScheduledExecutorService beatExecutor = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "llm-shared-state-heartbeat");
		thread.setDaemon(true);
		return thread;
	});

	private final AtomicBoolean checking = new AtomicBoolean();

	private volatile int replicas = 1;

	private final List<Supplier<Mono<?>>> reconcilers = new CopyOnWriteArrayList<>();

	private final List<Runnable> heartbeatTasks = new CopyOnWriteArrayList<>();

	private volatile @Nullable ScheduledFuture<?> heartbeats;

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
		return this.replicas;
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
		if (isAvailable() && !this.checking.getAndSet(true)) {
			this.beatExecutor.execute(() -> {
				this.checking.set(false);
				beat();
			});
		}
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
		this.reconcilers.add(reconciler);
		if (isAvailable()) {
			this.beatExecutor.execute(() -> reconcile(List.of(reconciler)));
		}
	}

	private void reconcile(List<Supplier<Mono<?>>> parts) {
		try {
			Flux.fromIterable(parts)
				.flatMap((part) -> Mono.defer(part).onErrorResume((error) -> Mono.empty()))
				.then()
				.block(this.settings.timeout().multipliedBy(2));
		}
		catch (RuntimeException ex) {
			logger.debug("Reconciliation goes on in the background: " + ex);
		}
	}

	/**
	 * Run a part's periodic task after each heartbeat that reached Redis, on this class's thread.
	 * @param task the task
	 */
	void everyHeartbeat(Runnable task) {
		this.heartbeatTasks.add(task);
	}

	/**
	 * Take the seat: a first heartbeat (waited for at most a few command timeouts, so that a
	 * replica that starts with Redis reachable shares from its first call), then one each
	 * {@code heartbeat}.
	 */
	public void start() {
		Future<?> first = this.beatExecutor.submit(this::beat);
		try {
			// the first connection starts Lettuce's event loops: more than a command's timeout
			first.get(this.settings.timeout().multipliedBy(4).plusSeconds(2).toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.debug("The first heartbeat is still under way: " + ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		long period = this.settings.heartbeat().toMillis();
		this.heartbeats = this.beatExecutor.scheduleWithFixedDelay(this::beat, period, period, TimeUnit.MILLISECONDS);
	}

	private void beat() {
		try {
			List<?> reply = heartbeat();
			this.replicas = (reply != null) ? Math.max(1, ((Number) reply.get(1)).intValue()) : 1;
			boolean unknown = reply != null && ((Number) reply.get(2)).intValue() == 1;
			boolean resumed = this.availability.up("Sharing LLM state on Redis under '" + this.settings.keyPrefix()
					+ "' as replica '" + replica() + "' (" + this.replicas + " replica(s) alive)");
			if (unknown && !resumed) {
				logger.warn("Redis no longer knew replica '" + replica() + "' (restarted without its data, or the "
						+ "others took this replica for gone): reconciling this replica's state with the fleet's");
			}
			if (resumed || unknown) {
				this.messages.subscribe(this.settings.timeout(), this.availability::down);
				reconcile(this.reconcilers);
			}
		}
		catch (RuntimeException ex) {
			this.availability.down(ex);
			return;
		}
		this.heartbeatTasks.forEach(RedisFleet::run);
	}

	/** One heartbeat, tried a second time at once before Redis is taken to be unavailable. */
	private @Nullable List<?> heartbeat() {
		List<String> args = List.of(replica(), String.valueOf(this.settings.replicaTimeout().toMillis()));
		try {
			return this.redis.execute(HEARTBEAT, List.of(key("replicas")), args).next().block(this.settings.timeout());
		}
		catch (RuntimeException first) {
			logger.debug("A heartbeat failed, trying again: " + first);
			return this.redis.execute(HEARTBEAT, List.of(key("replicas")), args).next().block(this.settings.timeout());
		}
	}

	private static void run(Runnable task) {
		try {
			task.run();
		}
		catch (RuntimeException ex) {
			logger.warn("Shared LLM state task failed: " + ex, ex);
		}
	}

	@Override
	public SharedStateStatus status() {
		return new SharedStateStatus("redis", isAvailable(), replica(), this.replicas,
				this.availability.unavailableSince(), this.availability.problem());
	}

	/**
	 * Leave the fleet: the heartbeat stops and this replica is marked gone at once, so that the
	 * others take over its deferred requests without waiting out {@code replica-timeout}.
	 */
	@Override
	public void close() {
		ScheduledFuture<?> beats = this.heartbeats;
		if (beats != null) {
			beats.cancel(false);
		}
		this.messages.close();
		if (isAvailable()) {
			try {
				this.redis.opsForZSet().add(key("replicas"), replica(), 0).block(this.settings.timeout());
			}
			catch (RuntimeException ex) {
				logger.debug("Could not mark replica '" + replica() + "' gone: " + ex);
			}
		}
		this.beatExecutor.shutdown();
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
