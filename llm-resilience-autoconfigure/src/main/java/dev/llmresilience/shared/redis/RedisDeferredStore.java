package dev.llmresilience.shared.redis;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.deferred.DeferredEntry;
import dev.llmresilience.deferred.DeferredStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The deferred queue on a Redis Stream with one consumer group: each request's entry is a hash
 * (its state and JSON), its ticket a message on the stream. The group hands each new message to
 * one replica, which runs the request when due and holds the message until the request ends; the
 * messages of a replica that stops heartbeating (a crash, a kill -9, a partition) are taken over
 * by another one, atomically ({@code deferred-reclaim.lua}). An end counts only if no replica ended
 * the request first ({@code deferred-end.lua}), and only then is its event published, on the
 * replica that ended it: each request completes once, although a replica cut off from Redis may
 * have made an attempt that another one repeats.
 *
 * <p>While Redis is unavailable, new requests are run by the replica that took them and moved to
 * Redis (attempts and all) when it is back; ends are recorded, and events published, once known to
 * count. Lost: such a request if its replica dies before Redis is back; and, if Redis loses its
 * data, requests on the stream no replica had taken yet (each replica adds back the ones it holds).
 */
public final class RedisDeferredStore implements DeferredStore, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisDeferredStore.class);

	private static final int BATCH = 32;

	private final RedisFleet fleet;

	private final DeferredStream redis;

	private final DeferredCodec codec = new DeferredCodec();

	private final Map<String, Held> held = new ConcurrentHashMap<>();

	private final Set<String> pushing = ConcurrentHashMap.newKeySet();

	private volatile @Nullable Runner runner;

	private volatile int fleetPending;

	/** Whether the consumer group is known to exist (it is made, if missing, each time sharing resumes). */
	private volatile boolean grouped;

	/**
	 * An entry this replica holds: taken here and not yet in Redis, run here (with its message id),
	 * or ended here and not yet recorded in Redis (with what to do once its end counts).
	 */
	private record Held(DeferredEntry entry, boolean inRedis, @Nullable String id, @Nullable Runnable won) {

		boolean isPending() {
			return this.entry.state() == DeferredResult.State.PENDING;
		}

	}

	/**
	 * Create the store.
	 * @param fleet this replica's seat in the fleet
	 * @param retention how long an ended request's outcome is kept
	 */
	public RedisDeferredStore(RedisFleet fleet, Duration retention) {
		this.fleet = fleet;
		this.redis = new DeferredStream(fleet, retention);
	}

	@Override
	public boolean isShared() {
		return true;
	}

	@Override
	public void start(Runner runner) {
		this.runner = runner;
		this.fleet.whenAvailable(this::reconcile);
		this.fleet.everyHeartbeat(this::tick);
	}

	@Override
	public void add(DeferredEntry entry) {
		this.held.put(entry.ticket(), new Held(entry, false, null, null));
		if (this.fleet.isAvailable() && this.grouped) {
			push(entry.ticket());
		}
		else {
			runHere(entry.ticket());
		}
	}

	@Override
	public void save(DeferredEntry entry) {
		Held now = this.held.compute(entry.ticket(),
				(ticket, old) -> (old != null) ? new Held(entry, old.inRedis, old.id, null) : new Held(entry, false, null, null));
		if (now.inRedis && this.fleet.isAvailable()) {
			this.redis.save(entry.ticket(), this.codec.write(entry)).subscribe(null, (error) -> { });
		}
	}

	@Override
	public void end(DeferredEntry entry, Runnable won) {
		Held before = this.held.get(entry.ticket());
		if (before == null || !before.inRedis) {
			// no other replica can have it: it counts; Redis learns of it (for lookups) when it can
			this.held.put(entry.ticket(), new Held(entry, false, null, null));
			won.run();
		}
		else {
			this.held.put(entry.ticket(), new Held(entry, true, before.id, won));
		}
		if (this.fleet.isAvailable()) {
			record(entry.ticket());
		}
	}

	@Override
	public Optional<DeferredEntry> find(String ticket) {
		return Optional.ofNullable(this.held.get(ticket)).map(Held::entry);
	}

	@Override
	public Mono<DeferredEntry> lookup(String ticket) {
		Held here = this.held.get(ticket);
		if (here != null) {
			return Mono.just(here.entry);
		}
		if (!this.fleet.isAvailable()) {
			return Mono.empty();
		}
		return this.redis.field(ticket, "json")
			.map(this.codec::read)
			.onErrorResume((error) -> Mono.empty());
	}

	@Override
	public List<DeferredEntry> pending() {
		return this.held.values().stream().filter(Held::isPending).map(Held::entry).toList();
	}

	@Override
	public int pendingCount() {
		return this.fleetPending + (int) this.held.values().stream().filter((h) -> h.isPending() && !h.inRedis).count();
	}

	private void push(String ticket) {
		Held taken = this.held.get(ticket);
		if (taken == null || taken.inRedis || !taken.isPending() || !this.pushing.add(ticket)) {
			return;
		}
		this.redis.add(ticket, this.codec.write(taken.entry))
			.doFinally((signal) -> this.pushing.remove(ticket))
			.subscribe((reply) -> {
				this.held.remove(ticket, taken);
				this.fleetPending = ((Number) reply.get(0)).intValue();
				adopt(reply.subList(1, reply.size()));
			}, (error) -> runHere(ticket));
	}

	private void runHere(String ticket) {
		Held taken = this.held.get(ticket);
		Runner here = this.runner;
		if (here != null && taken != null && !taken.inRedis && taken.isPending()) {
			here.run(taken.entry);
		}
	}

	/** Record an end in Redis; if it counts, and was this replica's to tell, its event follows. */
	private void record(String ticket) {
		Held ended = this.held.get(ticket);
		if (ended == null || ended.isPending()) {
			return;
		}
		this.redis.end(ticket, ended.entry.state().name(), this.codec.write(ended.entry), (ended.id != null) ? ended.id : "")
			.subscribe((counts) -> {
				if (this.held.remove(ticket, ended) && counts == 1 && ended.won != null) {
					ended.won.run();
				}
				else if (counts == 0) {
					logger.debug("A deferred request this replica ended had already ended on another replica");
				}
			}, (error) -> { });
	}

	private void poll() {
		if (this.runner != null && this.grouped && this.fleet.isAvailable()) {
			this.redis.poll(BATCH).subscribe((taken) -> {
				if (adopt(taken) == BATCH) {
					poll();
				}
			}, this::failed);
		}
	}

	/** Redis lost the group (restarted empty): it is made again at the next heartbeat. */
	private void failed(Throwable error) {
		if (String.valueOf(error.getMessage()).contains("NOGROUP")) {
			this.grouped = false;
		}
	}

	private int adopt(List<?> taken) {
		Runner here = this.runner;
		for (int i = 0; here != null && i + 1 < taken.size(); i += 2) {
			DeferredEntry entry = this.codec.read(String.valueOf(taken.get(i + 1)));
			this.held.put(entry.ticket(), new Held(entry, true, String.valueOf(taken.get(i)), null));
			here.run(entry);
		}
		return taken.size() / 2;
	}

	/**
	 * Each heartbeat: what this replica took or ended while Redis was unavailable (an entry whose
	 * attempt is under way waits for the next one), new requests, requests of replicas that are
	 * gone, and the fleet's count.
	 */
	private void tick() {
		if (!this.grouped) {
			reconcile().subscribe(null, (error) -> { });
			return;
		}
		Runner here = this.runner;
		this.held.forEach((ticket, kept) -> {
			if (!kept.isPending()) {
				record(ticket);
			}
			else if (!kept.inRedis && !this.pushing.contains(ticket) && here != null && here.release(ticket)) {
				push(ticket);
			}
		});
		poll();
		this.redis.reclaim().subscribe((taken) -> {
			int count = adopt(taken);
			if (count > 0) {
				logger.info("Took over " + count + " deferred LLM request(s) of replicas that are gone");
			}
		}, this::failed);
		this.redis.size().subscribe((count) -> this.fleetPending = count.intValue(), (error) -> { });
	}

	/**
	 * Sharing starts or resumes (before the heartbeat's {@link #tick()} moves what was taken here
	 * meanwhile): the group, made anew if Redis lost it, and the requests this replica runs checked
	 * against the stream: one taken over by another replica meanwhile is left to it, one Redis lost
	 * is added back.
	 */
	private Mono<?> reconcile() {
		return this.redis.mine().doOnNext((ids) -> {
			this.grouped = true;
			poll();
			this.held.forEach((ticket, kept) -> {
				if (kept.inRedis && kept.isPending() && !ids.contains(kept.id)) {
					recheck(ticket, kept);
				}
			});
		});
	}

	private void recheck(String ticket, Held kept) {
		Runner here = this.runner;
		if (here != null && here.release(ticket) && this.held.remove(ticket, kept)) {
			this.redis.field(ticket, "state")
				.defaultIfEmpty("")
				.subscribe((state) -> {
					if (state.isEmpty()) {
						this.held.put(ticket, new Held(kept.entry, false, null, null));
						push(ticket);
					}
				}, (error) -> {
					this.held.putIfAbsent(ticket, new Held(kept.entry, false, null, null));
					runHere(ticket);
				});
		}
	}

	/**
	 * Leave: what this replica runs stays on the stream and is taken over by the others; what it
	 * took while Redis was unavailable and could not move there is lost, and counted at WARN (not
	 * the tickets: a ticket is all it takes to read an answer).
	 */
	@Override
	public void close() {
		long lost = this.held.values().stream().filter((h) -> h.isPending() && !h.inRedis).count();
		if (lost > 0) {
			logger.warn(lost + " deferred LLM request(s) taken while Redis was unavailable are lost with this replica");
		}
	}

}
