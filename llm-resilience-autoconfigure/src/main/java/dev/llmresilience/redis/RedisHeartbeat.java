package dev.llmresilience.redis;

import java.time.Duration;
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
import java.util.function.Supplier;

import dev.llmresilience.redis.RedisSharedState.RedisSettings;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The replica's heartbeat, on a thread of its own that may wait: it tells the fleet this replica
 * is alive (by Redis's clock), learns how many replicas are, decides whether Redis is available
 * (a heartbeat that fails twice in a row makes it unavailable), and when sharing starts or resumes
 * (or Redis no longer knew this replica) subscribes anew and has every part reconcile; after each
 * heartbeat that got through it runs the parts' periodic tasks.
 */
final class RedisHeartbeat {

	private static final Log logger = LogFactory.getLog(RedisFleet.class);

	private static final RedisScript<List> HEARTBEAT = RedisScripts.load("heartbeat", List.class);

	private final ReactiveStringRedisTemplate redis;

	private final RedisSettings settings;

	private final String replicasKey;

	private final RedisAvailability availability;

	private final RedisMessages messages;

	private final ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor((task) -> {
		Thread thread = new Thread(task, "llm-shared-state-heartbeat");
		thread.setDaemon(true);
		return thread;
	});

	private final AtomicBoolean checking = new AtomicBoolean();

	private final List<Supplier<Mono<?>>> reconcilers = new CopyOnWriteArrayList<>();

	private final List<Runnable> tasks = new CopyOnWriteArrayList<>();

	private volatile int replicas = 1;

	private volatile @Nullable ScheduledFuture<?> schedule;

	RedisHeartbeat(ReactiveStringRedisTemplate redis, RedisSettings settings, String replicasKey,
			RedisAvailability availability, RedisMessages messages) {
		this.redis = redis;
		this.settings = settings;
		this.replicasKey = replicasKey;
		this.availability = availability;
		this.messages = messages;
	}

	int replicas() {
		return this.replicas;
	}

	void whenAvailable(Supplier<Mono<?>> reconciler) {
		this.reconcilers.add(reconciler);
		if (this.availability.isAvailable()) {
			this.executor.execute(() -> reconcile(List.of(reconciler)));
		}
	}

	void everyHeartbeat(Runnable task) {
		this.tasks.add(task);
	}

	/** A command failed with a timeout or a lost connection: check Redis now, once. */
	void check() {
		if (this.availability.isAvailable() && !this.checking.getAndSet(true)) {
			this.executor.execute(() -> {
				this.checking.set(false);
				beat();
			});
		}
	}

	/** A first heartbeat, waited for a while (the first connection starts Lettuce's event loops), then one each period. */
	void start() {
		Future<?> first = this.executor.submit(this::beat);
		try {
			first.get(this.settings.timeout().multipliedBy(4).plus(Duration.ofSeconds(2)).toMillis(),
					TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException | TimeoutException ex) {
			logger.debug("The first heartbeat is still under way: " + ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		long period = this.settings.heartbeat().toMillis();
		this.schedule = this.executor.scheduleWithFixedDelay(this::beat, period, period, TimeUnit.MILLISECONDS);
	}

	private void beat() {
		try {
			List<?> reply = heartbeat();
			this.replicas = (reply != null) ? Math.max(1, ((Number) reply.get(1)).intValue()) : 1;
			boolean unknown = reply != null && ((Number) reply.get(2)).intValue() == 1;
			boolean resumed = this.availability.up("Sharing LLM state on Redis under '" + this.settings.keyPrefix()
					+ "' as replica '" + this.settings.replica() + "' (" + this.replicas + " replica(s) alive)");
			if (unknown && !resumed) {
				logger.warn("Redis no longer knew replica '" + this.settings.replica() + "' (restarted without its "
						+ "data, or the others took this replica for gone): reconciling this replica's state with the fleet's");
			}
			if (resumed || unknown) {
				// a new pub/sub connection is made: more than a command's timeout on a busy machine
				this.messages.subscribe(this.settings.timeout().multipliedBy(4).plus(Duration.ofSeconds(2)),
						this.availability::down);
				reconcile(this.reconcilers);
			}
		}
		catch (RuntimeException ex) {
			this.availability.down(ex);
			return;
		}
		for (Runnable task : this.tasks) {
			try {
				task.run();
			}
			catch (RuntimeException ex) {
				logger.warn("Shared LLM state task failed: " + ex, ex);
			}
		}
	}

	/** One heartbeat, tried a second time at once before Redis is taken to be unavailable. */
	private @Nullable List<?> heartbeat() {
		List<String> args = List.of(this.settings.replica(), String.valueOf(this.settings.replicaTimeout().toMillis()));
		try {
			return this.redis.execute(HEARTBEAT, List.of(this.replicasKey), args).next().block(this.settings.timeout());
		}
		catch (RuntimeException first) {
			logger.debug("A heartbeat failed, trying again: " + first);
			return this.redis.execute(HEARTBEAT, List.of(this.replicasKey), args).next().block(this.settings.timeout());
		}
	}

	/** Wait for the parts' reconciliation, two command timeouts at most; the rest goes on in the background. */
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

	void stop() {
		ScheduledFuture<?> scheduled = this.schedule;
		if (scheduled != null) {
			scheduled.cancel(false);
		}
		this.executor.shutdown();
		try {
			// a heartbeat under way finishes before the connection it uses goes
			this.executor.awaitTermination(this.settings.timeout().multipliedBy(4).toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
