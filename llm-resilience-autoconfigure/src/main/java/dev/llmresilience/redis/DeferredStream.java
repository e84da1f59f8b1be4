package dev.llmresilience.redis;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import reactor.core.publisher.Mono;

import org.springframework.data.domain.Range;
import org.springframework.data.redis.connection.stream.Consumer;
import org.springframework.data.redis.connection.stream.PendingMessage;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The deferred queue's commands on Redis: under the prefix, {@code deferred} is the stream (one
 * message, {@code key}, per pending request) with the consumer group {@value #GROUP}, and
 * {@code deferred:<digest>} each request's hash ({@code state}, {@code ticket}, {@code json},
 * {@code id}; {@code by} and {@code reason} once ended, and {@code event}, the message's id, while the
 * event of an end that counted is still to be published), named by its {@link TicketDigest}. Each step
 * that touches both is one script. A request taken off the stream comes as four values:
 * {@code id, digest, ticket, json}.
 */
final class DeferredStream {

	static final String GROUP = "llm-deferred";

	private static final RedisScript<List> ADD = RedisScripts.load("deferred-add", List.class);

	private static final RedisScript<Long> SAVE = RedisScripts.load("deferred-save", Long.class);

	private static final RedisScript<Long> END = RedisScripts.load("deferred-end", Long.class);

	private static final RedisScript<Long> EVENTED = RedisScripts.load("deferred-evented", Long.class);

	private static final RedisScript<Long> MAKE_GROUP = RedisScripts.load("deferred-group", Long.class);

	private static final RedisScript<List> POLL = RedisScripts.load("deferred-poll", List.class);

	private static final RedisScript<List> RECLAIM = RedisScripts.load("deferred-reclaim", List.class);

	private static final RedisScript<List> IDLE = RedisScripts.load("deferred-idle", List.class);

	private static final RedisScript<List> REHAND = RedisScripts.load("deferred-rehand", List.class);

	private final RedisFleet fleet;

	private final Duration retention;

	private final String stream;

	DeferredStream(RedisFleet fleet, Duration retention) {
		this.fleet = fleet;
		this.retention = retention;
		this.stream = fleet.key("deferred");
	}

	/**
	 * Queue a pending request and take the oldest one nobody has taken (usually this one):
	 * {@code count, id, digest, ticket, json}, or {@code count} alone when there was none to take.
	 * Sent again after a lost reply, it adds nothing, and hands the request again if the first add
	 * handed it to this replica.
	 */
	Mono<List> add(String ticket, String json) {
		String digest = TicketDigest.of(ticket);
		return this.fleet.script(ADD, List.of(entry(digest), this.stream), digest, json, GROUP, this.fleet.replica(),
				this.fleet.key("deferred:"), ticket);
	}

	/** Keep a pending request's attempts. */
	Mono<Long> save(String ticket, String json) {
		return this.fleet.script(SAVE, List.of(entry(TicketDigest.of(ticket))), json);
	}

	/**
	 * End a request; the reply is 1 if this end counts, 0 if another replica's did, 2 if this one's
	 * did and its event is out already (published by a replica that took the request over). The
	 * message of an end that counts stays until {@link #evented}.
	 * @param digest the request's digest
	 * @param state COMPLETED or FAILED
	 * @param json the ended entry, or empty to drop the one kept (it could not be read)
	 * @param id its message on the stream, or empty for none
	 * @param reason why it failed, or empty
	 */
	Mono<Long> end(String digest, String state, String json, String id, String reason) {
		return this.fleet.script(END, List.of(entry(digest), this.stream), state, json,
				this.retention.toMillis(), GROUP, id, this.fleet.replica(), reason,
				this.fleet.settings().replicaTimeout().toMillis());
	}

	/**
	 * The event of a request whose end counted here (or that was taken over, ended, from a replica
	 * that is gone) is published: its message, held until now, leaves the stream.
	 * @param digest the request's digest
	 * @param id its message on the stream
	 */
	Mono<Long> evented(String digest, String id) {
		return this.fleet.script(EVENTED, List.of(entry(digest), this.stream), GROUP, id);
	}

	/** New requests for this replica: {@code id, digest, ticket, json, ...}. */
	Mono<List> poll(int count) {
		return this.fleet.script(POLL, List.of(this.stream), GROUP, this.fleet.replica(), count, this.fleet.key("deferred:"));
	}

	/**
	 * The requests of replicas that are gone, now this replica's: {@code id, digest, ticket, json, ...};
	 * pending ones, and ended ones whose event their replica had not published.
	 */
	Mono<List> reclaim() {
		return this.fleet.script(RECLAIM, List.of(this.stream, this.fleet.key("replicas")), GROUP, this.fleet.replica(),
				this.fleet.settings().replicaTimeout().toMillis(), 100, this.fleet.key("deferred:"));
	}

	/**
	 * A page of the messages the group holds for this replica that nothing handed to it for
	 * {@code replica-timeout}: the ids, oldest first.
	 * @param after the id the page starts after, or {@code -} for the first page
	 * @param count the page's size
	 */
	@SuppressWarnings("unchecked")
	Mono<List<String>> idle(String after, int count) {
		return this.fleet.script(IDLE, List.of(this.stream), GROUP, this.fleet.replica(),
				this.fleet.settings().replicaTimeout().toMillis(), after, count)
			.map((ids) -> ((List<Object>) ids).stream().map(String::valueOf).toList());
	}

	/**
	 * Hand again messages of this replica's whose hand-over it never heard of (a lost reply), if they
	 * are still idle: {@code id, digest, ticket, json, ...}, as {@link #reclaim} hands them.
	 * @param ids the messages
	 */
	Mono<List> rehand(List<String> ids) {
		Object[] args = new Object[4 + ids.size()];
		args[0] = GROUP;
		args[1] = this.fleet.replica();
		args[2] = this.fleet.settings().replicaTimeout().toMillis();
		args[3] = this.fleet.key("deferred:");
		for (int i = 0; i < ids.size(); i++) {
			args[4 + i] = ids.get(i);
		}
		return this.fleet.script(REHAND, List.of(this.stream), args);
	}

	/** Make the group if missing, then the ids of the messages the group holds for this replica. */
	Mono<Set<String>> mine() {
		return this.fleet.script(MAKE_GROUP, List.of(this.stream), GROUP)
			.then(this.fleet.command(() -> this.fleet.redis().opsForStream()
				.pending(this.stream, Consumer.from(GROUP, this.fleet.replica()), Range.unbounded(), 100_000L)))
			.map((pending) -> pending.stream().map(PendingMessage::getIdAsString).collect(Collectors.toSet()));
	}

	/** Requests on the stream: the fleet's pending count. */
	Mono<Long> size() {
		return this.fleet.command(() -> this.fleet.redis().opsForStream().size(this.stream));
	}

	/** A field of a request's hash, empty when there is no such request (or field). */
	Mono<String> field(String ticket, String field) {
		return this.fleet
			.command(() -> this.fleet.redis().<String, String>opsForHash().get(entry(TicketDigest.of(ticket)), field));
	}

	/** Fields of a request's hash, in order, each {@code null} when absent. */
	Mono<List<String>> fields(String ticket, List<String> fields) {
		return this.fleet.command(
				() -> this.fleet.redis().<String, String>opsForHash().multiGet(entry(TicketDigest.of(ticket)), fields));
	}

	private String entry(String digest) {
		return this.fleet.key("deferred:" + digest);
	}

}
