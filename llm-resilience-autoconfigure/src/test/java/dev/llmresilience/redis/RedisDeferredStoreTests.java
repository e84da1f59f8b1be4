package dev.llmresilience.redis;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Priority;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.engine.RedisServerSupport;
import dev.llmresilience.spi.DeferredStore;
import dev.llmresilience.spi.DeferredStore.DeferredEntry;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Redis deferred store alone, each replica a {@link RedisDeferredStore} on its own seat in the
 * fleet and its own connection to one real Redis, with a runner that records what the store hands
 * it: what is on Redis after each step (read with a connection of the test's own), which replica
 * runs a request, which end counts, what an entry that cannot be read does to its batch. The
 * heartbeat is 100 ms, so the few real waits are short; the gateway's side of the store is
 * {@code engine.SharedStoreQueueTests}, the whole fleet through Spring the {@code engine.Fleet*Tests}.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisDeferredStoreTests {

	private static final String PREFIX = "llm:store-test:";

	private static final Instant CREATED = Instant.parse("2026-12-02T10:00:00Z");

	private static final Duration WAIT = Duration.ofSeconds(10);

	private final Deque<AutoCloseable> closing = new ArrayDeque<>();

	private RedisServerSupport redis;

	private RedisCommands<String, String> commands;

	@BeforeEach
	void start() {
		this.redis = RedisServerSupport.start();
		RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", this.redis.port()));
		StatefulRedisConnection<String, String> connection = client.connect();
		this.closing.push(client::shutdown);
		this.closing.push(connection);
		this.commands = connection.sync();
	}

	@AfterEach
	void stop() throws Exception {
		try {
			while (!this.closing.isEmpty()) {
				this.closing.pop().close();
			}
		}
		finally {
			this.redis.close();
		}
	}

	@Test
	void anAcknowledgedAddIsOnRedisBeforeItsTicketIsGivenAndRunOnceByTheReplicaThatAddedIt() {
		Replica a = replica("a");
		Replica b = replica("b");
		DeferredEntry entry = pending("dfr_one");
		assertThat(a.store.add(entry).block(WAIT)).as("acknowledged").isTrue();
		// what the acknowledgement promises is on Redis when it comes
		assertThat(this.commands.hget(hash("dfr_one"), "state")).isEqualTo("PENDING");
		assertThat(this.commands.hget(hash("dfr_one"), "ticket")).isEqualTo("dfr_one");
		assertThat(this.commands.xlen(PREFIX + "deferred")).isOne();
		assertThat(a.runner.ran).extracting(DeferredEntry::ticket).containsExactly("dfr_one");
		assertThat(a.store.pendingCount()).isOne();
		assertThat(a.store.notDurableCount()).isZero();
		DeferredResult seen = b.store.lookup("dfr_one").block(WAIT);
		assertThat(seen.state()).isEqualTo(DeferredResult.State.PENDING);
		assertThat(seen.durable()).isTrue();
		await().during(Duration.ofMillis(400)).atMost(WAIT).untilAsserted(() -> assertThat(b.runner.ran).isEmpty());
		assertThat(a.runner.ran).hasSize(1);
	}

	@Test
	void aRequestAddedWhileRedisIsDownIsHeldAndRunHereThenMovedToRedisWhenItIsBack() {
		Replica a = replica("a");
		this.redis.stop();
		await().atMost(WAIT).until(() -> !a.fleet.isAvailable());
		assertThat(a.store.add(pending("dfr_held")).block(WAIT)).as("not acknowledged").isFalse();
		assertThat(a.runner.ran).extracting(DeferredEntry::ticket).containsExactly("dfr_held");
		assertThat(a.store.notDurableCount()).isOne();
		assertThat(a.store.pendingCount()).isOne();
		assertThat(a.store.lookup("dfr_held").block(WAIT).durable()).isFalse();
		this.redis.startAgain();
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.store.notDurableCount()).isZero());
		assertThat(this.commands.hget(hash("dfr_held"), "state")).isEqualTo("PENDING");
		assertThat(a.store.lookup("dfr_held").block(WAIT).durable()).isTrue();
	}

	@Test
	void aRequestWhoseAttemptIsUnderWayStaysHereUntilItsRunnerLetsItGo() {
		Replica a = replica("a");
		a.runner.holding.set(true);
		this.redis.stop();
		await().atMost(WAIT).until(() -> !a.fleet.isAvailable());
		a.store.add(pending("dfr_busy")).block(WAIT);
		this.redis.startAgain();
		await().atMost(WAIT).until(() -> a.fleet.isAvailable());
		await().during(Duration.ofMillis(500)).atMost(WAIT)
			.untilAsserted(() -> assertThat(a.store.notDurableCount()).isOne());
		assertThat(this.commands.exists(hash("dfr_busy"))).isZero();
		a.runner.holding.set(false);
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.store.notDurableCount()).isZero());
		assertThat(this.commands.hget(hash("dfr_busy"), "state")).isEqualTo("PENDING");
	}

	@Test
	void anEndRecordedOnRedisIsTheOneThatCountsAndItsEventFollowsOnce() {
		Replica a = replica("a");
		DeferredEntry entry = pending("dfr_end");
		a.store.add(entry).block(WAIT);
		AtomicInteger won = new AtomicInteger();
		a.store.end(entry.completed(answer(), CREATED.plusSeconds(5)), won::incrementAndGet);
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.commands.hget(hash("dfr_end"), "state"))
			.isEqualTo("COMPLETED"));
		await().atMost(WAIT).untilAsserted(() -> assertThat(won).hasValue(1));
		// the event is out: its message leaves the stream
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.commands.xlen(PREFIX + "deferred")).isZero());
		assertThat(this.commands.hget(hash("dfr_end"), "by")).isEqualTo("a");
		assertThat(this.commands.pttl(hash("dfr_end"))).as("kept for the retention").isBetween(1L,
				Duration.ofMinutes(5).toMillis());
		DeferredResult seen = replica("b").store.lookup("dfr_end").block(WAIT);
		assertThat(seen.state()).isEqualTo(DeferredResult.State.COMPLETED);
		assertThat(seen.response().content()).isEqualTo("the answer");
		assertThat(won).hasValue(1);
	}

	@Test
	void anEntryThatCannotBeReadEndsFailedAloneAndTheRestOfItsBatchRuns() {
		DeferredCodec codec = new DeferredCodec();
		queue("dfr_first", "dfr_first", codec.write(pending("dfr_first")));
		queue("dfr_broken", "dfr_broken", "{\"broken\"");
		queue("dfr_other", "dfr_other", codec.write(pending("dfr_someone_else")));
		// a hash whose ticket is not the one its key names: no ticket to tell
		queue("dfr_nameless", "dfr_forged", codec.write(pending("dfr_forged")));
		queue("dfr_last", "dfr_last", codec.write(pending("dfr_last")));
		Replica a = replica("a");
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.runner.ran).extracting(DeferredEntry::ticket)
			.containsExactly("dfr_first", "dfr_last"));
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.commands.hget(hash("dfr_nameless"), "state"))
			.isEqualTo("FAILED"));
		await().atMost(WAIT)
			.untilAsserted(() -> assertThat(a.runner.failed).containsOnlyKeys("dfr_broken", "dfr_other"));
		assertThat(a.runner.failed.get("dfr_broken")).startsWith("Its entry in Redis could not be read: ");
		assertThat(a.runner.failed.get("dfr_other"))
			.isEqualTo("Its entry in Redis could not be read: its ticket is not the one its key names");
		for (String ticket : List.of("dfr_broken", "dfr_other", "dfr_nameless")) {
			assertThat(this.commands.hget(hash(ticket), "state")).as(ticket).isEqualTo("FAILED");
			assertThat(this.commands.hget(hash(ticket), "reason")).as(ticket)
				.startsWith("Its entry in Redis could not be read: ");
			assertThat(this.commands.hexists(hash(ticket), "json")).as(ticket + ": nothing to run is kept").isFalse();
		}
		// the ended messages leave the stream at once; the two that run stay until they end
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.commands.xlen(PREFIX + "deferred")).isEqualTo(2));
		DeferredResult broken = a.store.lookup("dfr_broken").block(WAIT);
		assertThat(broken.state()).isEqualTo(DeferredResult.State.FAILED);
		assertThat(broken.reason()).startsWith("Its entry in Redis could not be read");
		assertThat(broken.durable()).isTrue();
		assertThat(a.runner.failed).hasSize(2);
	}

	@Test
	void aLookupOfATicketNobodyKnowsIsEmptyAndOfAStoredOneReadsItsHash() {
		Replica a = replica("a");
		assertThat(a.store.lookup("dfr_nobody").blockOptional(WAIT)).isEmpty();
		this.commands.hset(hash("dfr_bad"), Map.of("state", "PENDING", "ticket", "dfr_bad", "json", "not json"));
		DeferredResult bad = a.store.lookup("dfr_bad").block(WAIT);
		assertThat(bad.state()).isEqualTo(DeferredResult.State.PENDING);
		assertThat(bad.response()).isNull();
		this.commands.hset(hash("dfr_odd"), Map.of("state", "SOMETHING", "json", "not json"));
		assertThat(a.store.lookup("dfr_odd").blockOptional(WAIT)).isEmpty();
		assertThat(a.store.find("dfr_bad")).isEmpty();
	}

	@Test
	void aSecondEndOfARequestAnotherReplicaEndedFirstDoesNotCount() {
		Replica a = replica("a");
		DeferredEntry entry = pending("dfr_twice");
		a.store.add(entry).block(WAIT);
		// another replica ended it first, as deferred-end.lua records an end
		this.commands.hset(hash("dfr_twice"), Map.of("state", "FAILED", "by", "b", "reason", "b gave up"));
		AtomicInteger won = new AtomicInteger();
		a.store.end(entry.completed(answer(), CREATED.plusSeconds(5)), won::incrementAndGet);
		await().atMost(WAIT).until(() -> a.store.find("dfr_twice").isEmpty());
		assertThat(won).hasValue(0);
		assertThat(this.commands.hget(hash("dfr_twice"), "state")).isEqualTo("FAILED");
		assertThat(this.commands.hget(hash("dfr_twice"), "by")).isEqualTo("b");
		assertThat(this.commands.xlen(PREFIX + "deferred")).as("its message is let go").isZero();
	}

	/**
	 * A replica unheard of for its timeout (a pause, a loaded machine) has its messages taken over
	 * while it still runs them: it may then end the request (its end counts, naming the message as
	 * the one whose event is due) and die before it publishes the event. The replica that took the
	 * message over learns of it when its own attempt ends: it publishes the other's event, with the
	 * answer stored, and only then lets the message go. Without that the event was lost.
	 */
	@Test
	void anEndOfARequestTakenOverFromAReplicaThatEndedItAndDiedPublishesThatReplicasEvent() {
		Replica a = replica("a");
		DeferredEntry entry = pending("dfr_owed");
		a.store.add(entry).block(WAIT);
		// b held the message, ended the request long ago, and died before its event
		endedByB(entry, Map.of());
		AtomicInteger won = new AtomicInteger();
		a.store.end(entry.completed(answer(), CREATED.plusSeconds(5)), won::incrementAndGet);
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.runner.ended).hasSize(1));
		assertThat(a.runner.ended.get(0).response().content()).as("the answer that counted").isEqualTo("b's answer");
		assertThat(won).as("a's own end did not count").hasValue(0);
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.commands.xlen(PREFIX + "deferred"))
			.as("the message leaves the stream once the event is out").isZero());
		assertThat(this.commands.hget(hash("dfr_owed"), "event")).isNull();
		assertThat(this.commands.hget(hash("dfr_owed"), "by")).isEqualTo("b");
		assertThat(a.store.find("dfr_owed")).isEmpty();
		await().during(Duration.ofMillis(400)).atMost(WAIT).untilAsserted(() -> assertThat(a.runner.ended).hasSize(1));
	}

	/**
	 * The same, but the other replica's end is fresh: its event is its own to publish (it is
	 * alive, only taken for gone): this replica publishes nothing, asks again at its heartbeats,
	 * and lets the message go once that event is out. Both publishing made two events of one end.
	 */
	@Test
	void anEndOfARequestAnotherReplicaEndedJustBeforeLeavesItsEventToThatReplica() {
		Replica a = replica("a");
		DeferredEntry entry = pending("dfr_theirs");
		a.store.add(entry).block(WAIT);
		// b ended the request just now, by Redis's clock
		endedByB(entry, Map.of("ended", String.valueOf(Long.parseLong(this.commands.time().get(0)) * 1000)));
		AtomicInteger won = new AtomicInteger();
		a.store.end(entry.completed(answer(), CREATED.plusSeconds(5)), won::incrementAndGet);
		await().during(Duration.ofMillis(500)).atMost(WAIT).untilAsserted(() -> {
			assertThat(a.runner.ended).as("b's event is b's to publish").isEmpty();
			assertThat(this.commands.xlen(PREFIX + "deferred")).as("the message waits for b's event").isOne();
		});
		// b publishes its event, as deferred-evented.lua records it
		this.commands.hdel(hash("dfr_theirs"), "event");
		await().atMost(WAIT).until(() -> a.store.find("dfr_theirs").isEmpty());
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.commands.xlen(PREFIX + "deferred")).isZero());
		assertThat(a.runner.ended).isEmpty();
		assertThat(won).hasValue(0);
	}

	@Test
	void anAttemptSavedHereReachesTheRequestsHashOnRedis() {
		Replica a = replica("a");
		DeferredEntry entry = pending("dfr_saved");
		a.store.add(entry).block(WAIT);
		a.store.save(entry.attempted(CREATED.plusSeconds(7)));
		DeferredCodec codec = new DeferredCodec();
		await().atMost(WAIT).untilAsserted(() -> assertThat(codec.read(this.commands.hget(hash("dfr_saved"), "json")))
			.isEqualTo(entry.attempted(CREATED.plusSeconds(7))));
		assertThat(a.store.find("dfr_saved")).contains(entry.attempted(CREATED.plusSeconds(7)));
		assertThat(this.commands.hget(hash("dfr_saved"), "state")).isEqualTo("PENDING");
	}

	@Test
	void aRedisRestartedEmptyGetsBackTheRequestsThisReplicaRunsAndItsGroup() {
		Replica a = replica("a");
		a.store.add(pending("dfr_kept")).block(WAIT);
		this.redis.stop();
		await().atMost(WAIT).until(() -> !a.fleet.isAvailable());
		this.redis.startAgain();
		// added back, once, from what this replica holds
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.commands.hget(hash("dfr_kept"), "state"))
			.isEqualTo("PENDING"));
		assertThat(this.commands.xlen(PREFIX + "deferred")).isOne();
		// and the group is there again: a request another replica queued is handed to this one
		queue("dfr_new", "dfr_new", new DeferredCodec().write(pending("dfr_new")));
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.runner.ran).extracting(DeferredEntry::ticket)
			.contains("dfr_new"));
		assertThat(a.store.notDurableCount()).isZero();
	}

	@Test
	void aBacklogLongerThanOneBatchIsTakenAtOnceWithItsUnreadableEntryEnded() {
		DeferredCodec codec = new DeferredCodec();
		// more than the two polls of a replica's first heartbeat (its reconciliation's and its task's) take
		for (int i = 0; i < 80; i++) {
			queue("dfr_backlog_" + i, "dfr_backlog_" + i, codec.write(pending("dfr_backlog_" + i)));
		}
		queue("dfr_backlog_broken", "dfr_backlog_broken", "{");
		// one heartbeat in a minute: what is taken now is taken by the first poll alone, batch after batch
		Replica a = replica("a", Duration.ofMinutes(1));
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.runner.ran).hasSize(80));
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.runner.failed).containsOnlyKeys("dfr_backlog_broken"));
		assertThat(this.commands.hget(hash("dfr_backlog_broken"), "state")).isEqualTo("FAILED");
	}

	@Test
	void aRequestQueuedByAnotherReplicaIsTakenAtTheNextHeartbeatWithItsPriority() {
		Replica a = replica("a");
		await().atMost(WAIT).until(() -> a.fleet.isAvailable());
		DeferredEntry batch = new DeferredEntry("dfr_later",
				ChatRequest.builder().user("summarise this").priority(Priority.BATCH).deferrable(true).build(),
				DeferredResult.State.PENDING, 0, null, null, CREATED, CREATED);
		queue("dfr_later", "dfr_later", new DeferredCodec().write(batch));
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.runner.ran).extracting(DeferredEntry::ticket)
			.containsExactly("dfr_later"));
		// a batch request stays batch on the replica that runs it: it still yields to interactive calls
		assertThat(a.runner.ran.get(0).request().priority()).isEqualTo(Priority.BATCH);
		assertThat(a.runner.ran.get(0)).isEqualTo(batch);
	}

	@Test
	void anEndOfARequestOnlyThisReplicaHeldCountsAtOnce() {
		Replica a = replica("a");
		this.redis.stop();
		await().atMost(WAIT).until(() -> !a.fleet.isAvailable());
		DeferredEntry entry = pending("dfr_local_end");
		a.store.add(entry).block(WAIT);
		AtomicInteger won = new AtomicInteger();
		a.store.end(entry.failed("gave up", CREATED.plusSeconds(3)), won::incrementAndGet);
		assertThat(won).as("no other replica can have it").hasValue(1);
		assertThat(a.store.notDurableCount()).isZero();
		assertThat(a.store.pending()).isEmpty();
		this.redis.startAgain();
		// Redis learns of the end, for lookups from other replicas
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.commands.hget(hash("dfr_local_end"), "state"))
			.isEqualTo("FAILED"));
		assertThat(won).hasValue(1);
	}

	@Test
	void aGroupRedisLostIsMadeAgainAndNewRequestsAreTakenAgain() {
		Replica a = replica("a");
		a.store.add(pending("dfr_before")).block(WAIT);
		this.commands.xgroupDestroy(PREFIX + "deferred", DeferredStream.GROUP);
		queue("dfr_after", "dfr_after", new DeferredCodec().write(pending("dfr_after")));
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.runner.ran).extracting(DeferredEntry::ticket)
			.contains("dfr_after"));
		assertThat(this.commands.xinfoGroups(PREFIX + "deferred")).hasSize(1);
	}

	@Test
	void aRequestThisReplicaRunsIsNotRunAgainWhenRedisComesBackWithItsData() {
		Replica a = replica("a", Duration.ofMillis(100), Duration.ofMillis(500));
		a.store.add(pending("dfr_mine")).block(WAIT);
		assertThat(a.runner.ran).hasSize(1);
		// Redis stops answering for a while (two heartbeats' timeouts and more), and comes back with everything it had
		this.commands.clientPause(3_000);
		await().atMost(WAIT).until(() -> !a.fleet.isAvailable());
		await().atMost(WAIT).until(() -> a.fleet.isAvailable());
		await().during(Duration.ofMillis(800)).atMost(WAIT)
			.untilAsserted(() -> assertThat(a.runner.ran).as("run once").hasSize(1));
		assertThat(a.store.lookup("dfr_mine").block(WAIT).durable()).isTrue();
		assertThat(a.store.notDurableCount()).isZero();
	}

	@Test
	void aReplicaThatLeavesWithRequestsRedisDoesNotHaveSaysHowManyAreLost(CapturedOutput output) {
		Replica a = replica("a");
		a.store.close();
		assertThat(output).doesNotContain("are lost with this replica");
		this.redis.stop();
		await().atMost(WAIT).until(() -> !a.fleet.isAvailable());
		a.store.add(pending("dfr_lost")).block(WAIT);
		a.store.close();
		assertThat(output).contains("1 deferred LLM request(s) taken while Redis was unavailable or had not "
				+ "acknowledged them are lost with this replica").doesNotContain("dfr_lost");
	}

	@Test
	void aRequestHandedToThisReplicaInAReplyItNeverReceivedIsRunOnceAfterItsReplicaTimeout(CapturedOutput output) {
		Replica a = replica("a", Duration.ofMillis(100), Duration.ofSeconds(3), Duration.ofSeconds(1));
		await().atMost(WAIT).until(() -> a.fleet.isAvailable());
		// a poll whose reply was lost after Redis ran it (a command timeout): the group holds the
		// message for a, and a never heard of it; no other replica would take it over from a live one
		handedUnheard("dfr_unheard", "a");
		await().atMost(WAIT).untilAsserted(() -> assertThat(a.runner.ran).extracting(DeferredEntry::ticket)
			.containsExactly("dfr_unheard"));
		// handed again once: while a holds it, its message is a's known one however long it waits
		await().during(Duration.ofMillis(2500)).atMost(WAIT)
			.untilAsserted(() -> assertThat(a.runner.ran).as("run once").hasSize(1));
		assertThat(output).contains("Ran 1 deferred LLM request(s) that Redis had handed to this replica in a reply "
				+ "it never received").doesNotContain("dfr_unheard");
		a.store.end(a.runner.ran.get(0).completed(answer(), CREATED.plusSeconds(5)), () -> { });
		await().atMost(WAIT).untilAsserted(() -> assertThat(this.commands.hget(hash("dfr_unheard"), "state"))
			.isEqualTo("COMPLETED"));
	}

	@Test
	void aRequestThisReplicaRunsLongerThanItsReplicaTimeoutIsNotHandedAgain() {
		Replica a = replica("a", Duration.ofMillis(100), Duration.ofSeconds(3), Duration.ofSeconds(1));
		a.store.add(pending("dfr_long")).block(WAIT);
		assertThat(a.runner.ran).hasSize(1);
		// its attempt (or its backoff) outlasts the replica timeout: its message idles, known to a
		await().during(Duration.ofMillis(3000)).atMost(WAIT)
			.untilAsserted(() -> assertThat(a.runner.ran).as("run once").hasSize(1));
		assertThat(this.commands.xpending(PREFIX + "deferred", DeferredStream.GROUP).getCount()).isOne();
	}

	// what a poll whose reply is lost leaves: a new request on the stream, and the group's hand-over
	// of its message to the replica, in one step, so that the replica's own polls never see it
	private void handedUnheard(String ticket, String replica) {
		String digest = TicketDigest.of(ticket);
		String script = "redis.call('HSET', KEYS[1], 'state', 'PENDING', 'ticket', ARGV[1], 'json', ARGV[2]) "
				+ "local id = redis.call('XADD', KEYS[2], '*', 'key', ARGV[3]) "
				+ "redis.call('HSET', KEYS[1], 'id', id) "
				+ "redis.call('XREADGROUP', 'GROUP', ARGV[4], ARGV[5], 'COUNT', 1, 'STREAMS', KEYS[2], '>') return id";
		this.commands.eval(script, ScriptOutputType.VALUE,
				new String[] { PREFIX + "deferred:" + digest, PREFIX + "deferred" }, ticket,
				new DeferredCodec().write(pending(ticket)), digest, DeferredStream.GROUP, replica);
		assertThat(this.commands.xpending(PREFIX + "deferred", DeferredStream.GROUP).getCount())
			.as("held for " + replica).isOne();
	}

	// replica b's end of a request whose message a holds, as deferred-end.lua records an end that counts
	// with its event due on that message: b's answer, and the further fields given
	private void endedByB(DeferredEntry entry, Map<String, String> fields) {
		String id = this.commands.hget(hash(entry.ticket()), "id");
		DeferredEntry theirs = entry.completed(ChatResponse.builder().content("b's answer").endpoint("primary")
				.model("gpt-x").build(), CREATED.plusSeconds(4));
		Map<String, String> ended = new HashMap<>(Map.of("state", "COMPLETED", "by", "b", "event", id, "json",
				new DeferredCodec().write(theirs)));
		ended.putAll(fields);
		this.commands.hset(hash(entry.ticket()), ended);
	}

	// a message on the stream that no replica has taken, and its hash, as deferred-add.lua writes them
	// in one step: the hash first, so that a replica's poll never finds a message without its hash
	private void queue(String keyTicket, String ticket, String json) {
		String digest = TicketDigest.of(keyTicket);
		String key = PREFIX + "deferred:" + digest;
		this.commands.hset(key, Map.of("state", "PENDING", "ticket", ticket, "json", json));
		this.commands.hset(key, "id", this.commands.xadd(PREFIX + "deferred", Map.of("key", digest)));
	}

	private static String hash(String ticket) {
		return PREFIX + "deferred:" + TicketDigest.of(ticket);
	}

	private static DeferredEntry pending(String ticket) {
		return new DeferredEntry(ticket, ChatRequest.ofUser("summarise this"), DeferredResult.State.PENDING, 0, null,
				null, CREATED, CREATED);
	}

	private static ChatResponse answer() {
		return ChatResponse.builder().content("the answer").endpoint("primary").model("gpt-x").build();
	}

	private Replica replica(String name) {
		return replica(name, Duration.ofMillis(100));
	}

	// a command timeout that a loaded machine does not reach: Redis is taken to be unavailable only when
	// a test stops it (connections refused at once), or pauses it with a replica of a shorter timeout
	private Replica replica(String name, Duration heartbeat) {
		return replica(name, heartbeat, Duration.ofSeconds(3));
	}

	private Replica replica(String name, Duration heartbeat, Duration timeout) {
		return replica(name, heartbeat, timeout, Duration.ofSeconds(10));
	}

	private Replica replica(String name, Duration heartbeat, Duration timeout, Duration replicaTimeout) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", this.redis.port()));
		factory.afterPropertiesSet();
		factory.start();
		RedisFleet fleet = new RedisFleet(factory, new RedisSharedState.RedisSettings(PREFIX, name,
				timeout, heartbeat, replicaTimeout), Clock.systemUTC());
		RedisDeferredStore store = new RedisDeferredStore(fleet, Duration.ofMinutes(5));
		Recorder runner = new Recorder();
		this.closing.push(factory::destroy);
		this.closing.push(fleet);
		this.closing.push(store);
		store.start(runner);
		fleet.start();
		return new Replica(fleet, store, runner);
	}

	private record Replica(RedisFleet fleet, RedisDeferredStore store, Recorder runner) {
	}

	/** What the store hands a replica's queue. */
	private static final class Recorder implements DeferredStore.Runner {

		final List<DeferredEntry> ran = new CopyOnWriteArrayList<>();

		final Map<String, String> failed = new ConcurrentHashMap<>();

		final List<DeferredEntry> ended = new CopyOnWriteArrayList<>();

		/** While set, an attempt is under way: the store may not take its request away. */
		final AtomicBoolean holding = new AtomicBoolean();

		@Override
		public void run(DeferredEntry entry) {
			this.ran.add(entry);
		}

		@Override
		public boolean release(String ticket) {
			return !this.holding.get();
		}

		@Override
		public void failed(String ticket, String reason) {
			this.failed.put(ticket, reason);
		}

		@Override
		public void ended(DeferredEntry entry) {
			this.ended.add(entry);
		}

	}

}
