package dev.llmresilience.redis;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.spi.DeferredStore;
import dev.llmresilience.spi.DeferredStore.DeferredEntry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * The deferred queue on a Redis Stream with one consumer group: each request's entry is a hash
 * (its state and JSON) named by its ticket's digest, and a message on the stream. The group hands
 * each new message to one replica, which runs the request when due and holds the message until the
 * request ends; the messages of a replica that stops heartbeating (a crash, a kill -9, a partition)
 * are taken over by another one, atomically ({@code deferred-reclaim.lua}). An end counts only if no
 * replica ended the request first ({@code deferred-end.lua}), and only then is its event published,
 * on the replica that ended it: each request completes once, although a replica cut off from Redis
 * may have made an attempt that another one repeats. The message of an end that counted stays on
 * the stream until its event is published ({@code deferred-evented.lua}): a replica that dies in
 * between leaves it to the one that takes its messages over, which publishes the event, also when it
 * took the message over before that end (the replica was unheard of for its timeout while it still
 * ran the request): its own end then learns that the other one counted with its event due, and
 * asks again each heartbeat until that event is out, or publishes it once that replica has had
 * {@code replica-timeout} to publish it and has not (a replica taken for gone that publishes later
 * makes it come twice). So an event comes at least once (twice if a replica dies after it published
 * and before Redis heard of it). Messages handed to this replica in a reply it lost are taken back
 * once idle for {@code replica-timeout} ({@link #rehandLost}).
 *
 * <p>A new request's ticket is given once Redis has acknowledged its entry ({@link #add}); when
 * Redis is unavailable, or does not answer within the command timeout, it is held here and reported
 * {@code durable: false}. One that Redis is known not to have (it was unavailable) is run here and
 * moved to Redis when it is back; one whose add may have reached Redis (the reply was lost) is not
 * run anywhere until the add, sent again (it is idempotent), says where it is. An entry that cannot
 * be read ends FAILED on its own. While Redis is unavailable, ends are recorded, and events
 * published, once known to count. Lost: a request held here if its replica dies before Redis is
 * back; and, if Redis loses its data, requests on the stream no replica had taken yet (each replica
 * adds back the ones it holds).
 */
final class RedisDeferredStore implements DeferredStore, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisDeferredStore.class);

	private static final int BATCH = 32;

	/** The idle messages of this replica's looked at each heartbeat. */
	private static final int IDLE_PAGE = 100;

	/** A request taken off the stream: its message id, digest, ticket and JSON. */
	private static final int TAKEN = 4;

	private final DeferredStream redis;

	private final RedisFleet fleet;

	private final DeferredCodec codec = new DeferredCodec();

	private final Map<String, Held> held = new ConcurrentHashMap<>();

	private final Set<String> pushing = ConcurrentHashMap.newKeySet();

	/** Ends that counted, whose events are published, and whose messages Redis has not let go yet: ids by digest. */
	private final Map<String, String> evented = new ConcurrentHashMap<>();

	/**
	 * Requests ended here whose end came second to another replica's, with that replica's event
	 * due on the message held here, by ticket: asked about at each heartbeat until the event is out.
	 */
	private final Map<String, Held> awaiting = new ConcurrentHashMap<>();

	/** Unreadable entries taken here whose FAILED end Redis has not acknowledged yet, by digest. */
	private final Map<String, Unreadable> unreadable = new ConcurrentHashMap<>();

	/** Where the last page of this replica's idle messages ended ({@link #rehandLost}); {@code -} to start over. */
	private volatile String idleAfter = "-";

	private volatile @Nullable Runner runner;

	private volatile int fleetPending;

	/** Whether the consumer group is known to exist (it is made, if missing, each time sharing resumes). */
	private volatile boolean grouped;

	/**
	 * An entry this replica holds: taken here and not yet in Redis (run here unless {@code unsure}:
	 * its add may have reached Redis), run here (with its message id), or ended here and not yet
	 * recorded in Redis (with what to do once its end counts).
	 */
	private record Held(DeferredEntry entry, boolean inRedis, @Nullable String id, @Nullable Runnable won,
			boolean unsure) {

		static Held local(DeferredEntry entry) {
			return new Held(entry, false, null, null, false);
		}

		boolean isPending() {
			return this.entry.state() == DeferredResult.State.PENDING;
		}

		boolean isLocalPending() {
			return isPending() && !this.inRedis;
		}

	}

	/** An entry that could not be read, to be ended FAILED. */
	private record Unreadable(String id, String ticket, String reason) {
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
	public Mono<Boolean> add(DeferredEntry entry) {
		return Mono.defer(() -> {
			this.held.put(entry.ticket(), Held.local(entry));
			if (this.fleet.isAvailable() && this.grouped) {
				return push(entry.ticket());
			}
			runHere(entry.ticket());
			return Mono.just(false);
		});
	}

	@Override
	public void save(DeferredEntry entry) {
		Held now = this.held.compute(entry.ticket(), (ticket, old) -> (old != null)
				? new Held(entry, old.inRedis, old.id, null, old.unsure) : Held.local(entry));
		if (now.inRedis && this.fleet.isAvailable()) {
			this.redis.save(entry.ticket(), this.codec.write(entry)).subscribe(null, (error) -> { });
		}
	}

	@Override
	public void end(DeferredEntry entry, Runnable won) {
		Held before = this.held.get(entry.ticket());
		if (before == null || !before.inRedis) {
			// no other replica can have it: it counts; Redis learns of it (for lookups) when it can
			this.held.put(entry.ticket(), Held.local(entry));
			won.run();
		}
		else {
			this.held.put(entry.ticket(), new Held(entry, true, before.id, won, false));
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
	public Mono<DeferredResult> lookup(String ticket) {
		Held here = this.held.get(ticket);
		if (here != null) {
			return Mono.just(here.entry.toResult(here.inRedis));
		}
		if (!this.fleet.isAvailable()) {
			return Mono.empty();
		}
		return this.redis.fields(ticket, List.of("state", "json", "reason"))
			.flatMap((fields) -> Mono.justOrEmpty(stored(ticket, fields)))
			.onErrorResume((error) -> Mono.empty());
	}

	/** A request's state from its hash; one whose JSON cannot be read reports its state and reason alone. */
	private Optional<DeferredResult> stored(String ticket, List<String> fields) {
		String state = fields.get(0);
		if (state == null) {
			return Optional.empty();
		}
		try {
			return Optional.of(read(fields.get(1), TicketDigest.of(ticket)).toResult(true));
		}
		catch (RuntimeException ex) {
			for (DeferredResult.State known : DeferredResult.State.values()) {
				if (known.name().equals(state)) {
					return Optional.of(new DeferredResult(ticket, known, null, fields.get(2), true));
				}
			}
			return Optional.empty();
		}
	}

	@Override
	public List<DeferredEntry> pending() {
		return this.held.values().stream().filter(Held::isPending).map(Held::entry).toList();
	}

	@Override
	public int pendingCount() {
		return this.fleetPending + notDurableCount();
	}

	@Override
	public int notDurableCount() {
		return (int) this.held.values().stream().filter(Held::isLocalPending).count();
	}

	/**
	 * Send a request held here to Redis. Until the reply it is {@code unsure}: a reply that does
	 * not come (a timeout, a dropped connection) leaves it so, not run here, until the add sent again
	 * at a heartbeat tells where it is.
	 * @return true once Redis has it, false if the reply did not come
	 */
	private Mono<Boolean> push(String ticket) {
		Held taken = this.held.get(ticket);
		if (taken == null || taken.inRedis || !taken.isPending() || !this.pushing.add(ticket)) {
			return Mono.just(false);
		}
		Held sent = new Held(taken.entry, false, null, null, true);
		if (!this.held.replace(ticket, taken, sent)) {
			this.pushing.remove(ticket);
			return Mono.just(false);
		}
		return this.redis.add(ticket, this.codec.write(sent.entry)).map((reply) -> {
			this.held.remove(ticket, sent);
			this.fleetPending = ((Number) reply.get(0)).intValue();
			adopt(reply.subList(1, reply.size()));
			return true;
		}).onErrorResume((error) -> Mono.just(false)).doFinally((signal) -> this.pushing.remove(ticket));
	}

	private void runHere(String ticket) {
		Held taken = this.held.get(ticket);
		Runner here = this.runner;
		if (here != null && taken != null && taken.isLocalPending() && !taken.unsure) {
			here.run(taken.entry);
		}
	}

	/** Record an end in Redis; if it counts, and was this replica's to tell, its event follows. */
	private void record(String ticket) {
		Held ended = this.held.get(ticket);
		if (ended == null || ended.isPending()) {
			return;
		}
		end(ticket, ended).subscribe((counts) -> {
			if (counts == 3 || counts == 4) {
				// another replica's end counted, its event due on the message held here: no longer
				// this replica's to tell (lookups read the answer that counted, from Redis)
				if (this.held.remove(ticket, ended)) {
					this.awaiting.put(ticket, ended);
					if (counts == 3) {
						publishTheirs(ticket, ended);
					}
				}
				return;
			}
			boolean mine = this.held.remove(ticket, ended);
			if (mine && counts == 1) {
				if (ended.won != null) {
					ended.won.run();
				}
				if (ended.id != null) {
					published(TicketDigest.of(ticket), ended.id);
				}
			}
			else if (counts == 0) {
				logger.debug("A deferred request this replica ended had already ended on another replica");
			}
			else if (counts == 2) {
				logger.debug("A deferred request this replica ended was taken over, ended, while this replica "
						+ "was unheard of, and its event published by the replica that took it");
			}
		}, (error) -> { });
	}

	/** This replica's end of a request, sent to Redis ({@code deferred-end.lua}): how it counted. */
	private Mono<Long> end(String ticket, Held ended) {
		String reason = (ended.entry.reason() != null) ? ended.entry.reason() : "";
		return this.redis.end(TicketDigest.of(ticket), ended.entry.state().name(), this.codec.write(ended.entry),
				(ended.id != null) ? ended.id : "", reason);
	}

	/**
	 * Another replica's end counted, and its event is still due, past that replica's time to
	 * publish it, on the message this replica took over (that replica was taken for gone while it
	 * still ran the request): published here, with the answer stored, and then the message let go.
	 * Until the stored entry is read, the request stays {@code awaiting}, asked about again at the
	 * next heartbeat.
	 */
	private void publishTheirs(String ticket, Held ended) {
		String digest = TicketDigest.of(ticket);
		this.redis.fields(ticket, List.of("json")).subscribe((fields) -> {
			Runner here = this.runner;
			if (ended.id == null || here == null || !this.awaiting.remove(ticket, ended)) {
				return;
			}
			try {
				here.ended(read(fields.get(0), digest));
			}
			catch (RuntimeException ex) {
				logger.warn("Could not publish the event of a deferred request another replica ended, whose message "
						+ "this replica took over: " + ex, ex);
			}
			published(digest, ended.id);
		}, (error) -> { });
	}

	/**
	 * Ask again, at a heartbeat, whether another replica's event, due on a message held here, is
	 * out (the message is then let go) or overdue (then published here).
	 */
	private void recheckTheirs(String ticket, Held kept) {
		end(ticket, kept).subscribe((counts) -> {
			if (counts == 3) {
				publishTheirs(ticket, kept);
			}
			else if (counts != 4) {
				// its event is out: the end just sent let go of the message
				this.awaiting.remove(ticket, kept);
			}
		}, (error) -> { });
	}

	/** A request's event is out: its message may leave the stream (again at a heartbeat if Redis did not answer). */
	private void published(String digest, String id) {
		this.evented.put(digest, id);
		this.redis.evented(digest, id).subscribe((done) -> this.evented.remove(digest, id), (error) -> { });
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

	/**
	 * Redis lost the group (restarted empty, flushed, the group destroyed): it is made again at the
	 * next heartbeat. Redis's error may come wrapped, by the driver or by Spring's translation, in
	 * exceptions whose own message does not repeat it.
	 */
	private void failed(Throwable error) {
		for (Throwable cause = error; cause != null; cause = cause.getCause()) {
			if (String.valueOf(cause.getMessage()).contains("NOGROUP")) {
				this.grouped = false;
				return;
			}
		}
	}

	/**
	 * Run what Redis handed to this replica, and publish the events of ended requests taken over
	 * from a replica that died before it did. Each entry on its own: one that cannot be read ends
	 * FAILED, and the others are run all the same.
	 * @return how many were handed
	 */
	private int adopt(List<?> taken) {
		return adopt(taken, false);
	}

	/**
	 * @param lost whether these were handed again after a lost reply: one whose ticket this
	 * replica holds (it runs it, or its add, sent again, will hand it) is left to that, and not
	 * counted
	 */
	private int adopt(List<?> taken, boolean lost) {
		Runner here = this.runner;
		int count = 0;
		for (int i = 0; here != null && i + TAKEN <= taken.size(); i += TAKEN) {
			count++;
			String id = String.valueOf(taken.get(i));
			String digest = String.valueOf(taken.get(i + 1));
			DeferredEntry entry;
			try {
				entry = read(String.valueOf(taken.get(i + 3)), digest);
			}
			catch (RuntimeException ex) {
				this.unreadable.put(digest, new Unreadable(id, String.valueOf(taken.get(i + 2)),
						"Its entry in Redis could not be read: " + ex.getMessage()));
				endUnreadable(digest);
				continue;
			}
			if (lost && this.held.containsKey(entry.ticket())) {
				// held here after all: run here, or to be handed by its add sent again (not counted)
				count--;
				continue;
			}
			if (entry.state() != DeferredResult.State.PENDING) {
				// ended on a replica that died before it published the event: published here
				try {
					here.ended(entry);
				}
				catch (RuntimeException ex) {
					logger.warn("Could not publish the event of a deferred request taken over ended: " + ex, ex);
				}
				published(digest, id);
				continue;
			}
			this.held.put(entry.ticket(), new Held(entry, true, id, null, false));
			try {
				here.run(entry);
			}
			catch (RuntimeException ex) {
				logger.warn("Could not run a deferred request taken from Redis: " + ex, ex);
			}
		}
		return count;
	}

	/** An entry as Redis keeps it, if it is the one its key names. */
	private DeferredEntry read(@Nullable String json, String digest) {
		if (json == null || json.isEmpty()) {
			throw new IllegalArgumentException("it has no JSON");
		}
		DeferredEntry entry = this.codec.read(json);
		if (!TicketDigest.of(entry.ticket()).equals(digest)) {
			throw new IllegalArgumentException("its ticket is not the one its key names");
		}
		return entry;
	}

	/** End an unreadable entry FAILED; its event follows if this end counts (again at a heartbeat if Redis did not answer). */
	private void endUnreadable(String digest) {
		Unreadable entry = this.unreadable.get(digest);
		if (entry == null) {
			return;
		}
		this.redis.end(digest, DeferredResult.State.FAILED.name(), "", entry.id, entry.reason).subscribe((counts) -> {
			Runner here = this.runner;
			if (!this.unreadable.remove(digest, entry) || counts != 1 || here == null) {
				return;
			}
			if (TicketDigest.of(entry.ticket).equals(digest)) {
				here.failed(entry.ticket, entry.reason);
			}
			else {
				logger.warn("A deferred request's entry in Redis could not be read, nor its ticket: it ended FAILED "
						+ "without an event");
			}
		}, (error) -> { });
	}

	/**
	 * Each heartbeat: what this replica took or ended while Redis was unavailable (an entry whose
	 * attempt is under way waits for the next one) or whose add's reply was lost, the messages of
	 * events published that Redis has not let go, new requests,
	 * requests of replicas that are gone, and the fleet's count.
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
				push(ticket).subscribe();
			}
		});
		this.unreadable.keySet().forEach(this::endUnreadable);
		this.awaiting.forEach(this::recheckTheirs);
		this.evented.forEach(this::published);
		poll();
		rehandLost();
		this.redis.reclaim().subscribe((taken) -> {
			int count = adopt(taken);
			if (count > 0) {
				logger.info("Took over " + count + " deferred LLM request(s) of replicas that are gone");
			}
		}, this::failed);
		this.redis.size().subscribe((count) -> this.fleetPending = count.intValue(), (error) -> { });
	}

	/**
	 * Run the requests the group holds for this replica that it never heard of. A poll, an add or a
	 * takeover hands messages to this replica in its reply; when that reply is lost (the command
	 * timed out on a busy machine, the connection dropped) after Redis ran it, the messages are this
	 * replica's on the stream and nobody runs them: no other replica takes over the messages of one
	 * that heartbeats. Each heartbeat looks at a page of this replica's messages that nothing handed
	 * to it for {@code replica-timeout} (far longer than a reply is on its way), and those it does not
	 * hold, or hold the event of, are handed to it again and run, as a takeover would run them.
	 */
	private void rehandLost() {
		Runner here = this.runner;
		if (here == null || !this.fleet.isAvailable()) {
			return;
		}
		this.redis.idle(this.idleAfter, IDLE_PAGE).subscribe((ids) -> {
			this.idleAfter = (ids.size() < IDLE_PAGE) ? "-" : ids.get(ids.size() - 1);
			Set<String> known = knownIds();
			List<String> lost = ids.stream().filter((id) -> !known.contains(id)).toList();
			if (lost.isEmpty()) {
				return;
			}
			this.redis.rehand(lost).subscribe((taken) -> {
				int count = adopt(taken, true);
				if (count > 0) {
					logger.warn("Ran " + count + " deferred LLM request(s) that Redis had handed to this replica in "
							+ "a reply it never received (a command timeout or a dropped connection), "
							+ this.fleet.settings().replicaTimeout().toSeconds() + " s or more after they were due");
				}
			}, this::failed);
		}, this::failed);
	}

	/** The messages this replica knows it holds: the requests it runs or ended, and the events it owes or awaits. */
	private Set<String> knownIds() {
		Set<String> known = new HashSet<>(this.evented.values());
		this.held.values().forEach((kept) -> {
			if (kept.id != null) {
				known.add(kept.id);
			}
		});
		this.awaiting.values().forEach((kept) -> {
			if (kept.id != null) {
				known.add(kept.id);
			}
		});
		this.unreadable.values().forEach((entry) -> known.add(entry.id));
		return known;
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

	/**
	 * A request this replica ran is no longer its own on the stream: held back, unrun, and added
	 * again at the next heartbeat, which adds nothing if Redis still has it (another replica took it
	 * over) and adds it back if Redis lost it.
	 */
	private void recheck(String ticket, Held kept) {
		Runner here = this.runner;
		if (here != null && here.release(ticket)) {
			this.held.replace(ticket, kept, new Held(kept.entry, false, null, null, true));
		}
	}

	/**
	 * Leave: what this replica runs stays on the stream and is taken over by the others; what it
	 * took while Redis was unavailable and could not move there is lost, and counted at WARN (not
	 * the tickets: a ticket is all it takes to read an answer).
	 */
	@Override
	public void close() {
		long lost = notDurableCount();
		if (lost > 0) {
			logger.warn(lost + " deferred LLM request(s) taken while Redis was unavailable or had not acknowledged "
					+ "them are lost with this replica, unless Redis has them");
		}
	}

}
