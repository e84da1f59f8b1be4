package dev.llmresilience.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.DeferredRequestFailedEvent;
import dev.llmresilience.gateway.LlmGateway;
import io.lettuce.core.Consumer;
import io.lettuce.core.XGroupCreateArgs;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What Redis holds of deferred requests, read and written directly: an entry that cannot be read
 * ends FAILED with its reason, its event and its place in the count, and never holds up the good
 * entries of its batch (taken off the stream, or taken over from a replica that is gone); a request
 * someone changed in Redis is checked like a new one and ends FAILED unsent; and no key names a
 * ticket.
 */
class DeferredEntriesOnRedisTests {

	private static final Instant LONG_AGO = Instant.parse("2026-01-01T00:00:00Z");

	@RegisterExtension
	final RedisFleet redis = new RedisFleet();

	private SwitchableProvider provider;

	@BeforeEach
	void start() {
		this.provider = new SwitchableProvider();
		this.provider.heal();
	}

	@AfterEach
	void stop() {
		this.provider.close();
	}

	private List<ApplicationContextRunner> replica() {
		return List.of(this.redis.replica("a", "llm.endpoints.primary.base-url=" + this.provider.baseUrl(),
				"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1",
				"llm.gateway.deferral.delay=1s", "llm.gateway.deferral.max-attempts=3"));
	}

	@ParameterizedTest(name = "held by a replica that is gone: {0}")
	@ValueSource(booleans = { false, true })
	void anUnreadableEntryEndsFailedOnItsOwnAndTheRestOfItsBatchRuns(boolean heldByAGoneReplica) {
		RedisCommands<String, String> commands = this.redis.commands();
		commands.xgroupCreate(XReadArgs.StreamOffset.from(RedisKeys.STREAM, "0"), RedisKeys.GROUP,
				XGroupCreateArgs.Builder.mkstream());
		Map<String, String> good = new LinkedHashMap<>();
		Map<String, String> bad = new LinkedHashMap<>();
		for (int i = 0; i < 4; i++) {
			String ticket = "dfr_good" + i;
			good.put(ticket, "good " + i);
			write(ticket, entry(ticket, "good " + i, "{}"));
			if (i < 3) {
				String unreadable = "dfr_bad" + i;
				bad.put(unreadable, switch (i) {
					case 0 -> "{\"v\":1,\"ticket\":";
					case 1 -> entry(unreadable, "from a newer replica", "{}").replace("{\"v\":1", "{\"v\":2");
					default -> entry(unreadable, "no request", "{}").replaceFirst(",\"request\":\\{.*\\},\"response\"",
							",\"response\"");
				});
				write(unreadable, bad.get(unreadable));
			}
		}
		if (heldByAGoneReplica) {
			// handed to a consumer that never heartbeat: the replica starting next takes them over in one batch
			assertThat(commands.xreadgroup(Consumer.from(RedisKeys.GROUP, "gone"), XReadArgs.Builder.count(100),
					XReadArgs.StreamOffset.lastConsumed(RedisKeys.STREAM))).hasSize(7);
		}
		Replicas.run(replica(), (replicas) -> {
			ApplicationContext a = replicas.get(0);
			await().atMost(Duration.ofSeconds(30))
				.until(() -> FleetEvents.of(a).completed.size() == 4 && FleetEvents.of(a).failed.size() == 3);
			assertThat(FleetEvents.of(a).completed.stream().map(DeferredRequestCompletedEvent::getTicket))
				.containsExactlyInAnyOrderElementsOf(good.keySet());
			assertThat(FleetEvents.of(a).completed).allSatisfy((event) -> assertThat(event.getResponse().content())
				.isEqualTo("answer to " + good.get(event.getTicket())));
			Map<String, String> reasons = FleetEvents.of(a).failed.stream()
				.collect(Collectors.toMap(DeferredRequestFailedEvent::getTicket, DeferredRequestFailedEvent::getReason));
			assertThat(reasons).containsOnlyKeys(bad.keySet());
			assertThat(reasons.get("dfr_bad0")).isEqualTo("Its entry in Redis could not be read: it is not JSON");
			assertThat(reasons.get("dfr_bad1")).startsWith("Its entry in Redis could not be read: its format version is 2");
			assertThat(reasons.get("dfr_bad2")).isEqualTo("Its entry in Redis could not be read: request is missing");
			for (String ticket : bad.keySet()) {
				DeferredResult result = gateway(a).deferred(ticket).block(Duration.ofSeconds(5));
				assertThat(result.state()).isEqualTo(DeferredResult.State.FAILED);
				assertThat(result.reason()).isEqualTo(reasons.get(ticket));
				assertThat(result.durable()).isTrue();
			}
			assertThat(this.provider.answers()).isEqualTo(4);
			await().atMost(Duration.ofSeconds(30)).until(() -> a.getBean(DeferredQueue.class).pending() == 0);
			assertThat(commands.xlen(RedisKeys.STREAM)).isZero();
		});
	}

	@Test
	void aRequestChangedInRedisIsCheckedLikeANewOneAndEndsFailedUnsent() {
		RedisCommands<String, String> commands = this.redis.commands();
		commands.xgroupCreate(XReadArgs.StreamOffset.from(RedisKeys.STREAM, "0"), RedisKeys.GROUP,
				XGroupCreateArgs.Builder.mkstream());
		write("dfr_tampered", entry("dfr_tampered", "use the expensive model", "{\"model\":\"gpt-expensive\"}"));
		write("dfr_slow", entry("dfr_slow", "hold a connection", "{}").replace("\"timeout\":null", "\"timeout\":\"PT24H\""));
		Replicas.run(replica(), (replicas) -> {
			ApplicationContext a = replicas.get(0);
			await().atMost(Duration.ofSeconds(30)).until(() -> FleetEvents.of(a).failed.size() == 2);
			Map<String, String> reasons = FleetEvents.of(a).failed.stream()
				.collect(Collectors.toMap(DeferredRequestFailedEvent::getTicket, DeferredRequestFailedEvent::getReason));
			assertThat(reasons.get("dfr_tampered"))
				.startsWith("Refused before it was sent: ChatRequest.extra sets 'model', a field the starter writes");
			assertThat(reasons.get("dfr_slow")).startsWith("Refused before it was sent: ChatRequest.timeout is PT24H, "
					+ "longer than llm.gateway.max-request-timeout");
			assertThat(gateway(a).deferred("dfr_tampered").block(Duration.ofSeconds(5)).state())
				.isEqualTo(DeferredResult.State.FAILED);
			assertThat(this.provider.requests()).as("requests sent upstream").isZero();
			assertThat(FleetEvents.of(a).completed).isEmpty();
		});
	}

	@Test
	void noKeyNamesATicket() throws Exception {
		try (SwitchableProvider failing = new SwitchableProvider()) {
			String[] properties = RedisFleet.deferringPrimary(failing.baseUrl(), "1s", 10);
			Replicas.run(List.of(this.redis.replica("a", properties)), (replicas) -> {
				ApplicationContext a = replicas.get(0);
				List<String> tickets = new ArrayList<>();
				for (int i = 0; i < 3; i++) {
					ChatResponse answer = gateway(a).chat(ChatRequest.builder().user("q" + i).deferrable(true).build())
						.block(Duration.ofSeconds(30));
					assertThat(answer.tier()).isEqualTo(Tier.DEFERRED);
					tickets.add(answer.ticket());
				}
				assertNoTicketIn(tickets);
				assertThat(this.redis.commands().xrange(RedisKeys.STREAM, io.lettuce.core.Range.unbounded()))
					.hasSize(3)
					.allSatisfy((message) -> assertThat(message.getBody().values())
						.noneMatch((value) -> value.startsWith("dfr_")));
				failing.heal();
				await().atMost(Duration.ofSeconds(30)).until(() -> FleetEvents.of(a).completed.size() == 3);
				assertNoTicketIn(tickets);
			});
		}
	}

	private void assertNoTicketIn(List<String> tickets) {
		List<String> keys = this.redis.commands().keys("*");
		assertThat(keys).contains(RedisKeys.entry(tickets.get(0)));
		for (String ticket : tickets) {
			String secret = ticket.substring("dfr_".length());
			assertThat(keys).noneMatch((key) -> key.contains(secret));
		}
	}

	/** An entry as the format writes it: one user message, every other field unset, long overdue. */
	private static String entry(String ticket, String prompt, String extra) {
		return "{\"v\":1,\"ticket\":\"" + ticket + "\",\"state\":\"PENDING\",\"attempts\":0,\"createdAt\":\"" + LONG_AGO
				+ "\",\"updatedAt\":\"" + LONG_AGO + "\",\"reason\":null,\"request\":{\"messages\":[{\"role\":\"user\","
				+ "\"content\":\"" + prompt + "\",\"parts\":[],\"toolCalls\":[],\"toolCallId\":null,\"name\":null}],"
				+ "\"route\":null,\"temperature\":null,\"maxTokens\":null,\"extra\":" + extra + ",\"timeout\":null,"
				+ "\"deadline\":null,\"deferrable\":true,\"cacheScope\":null,\"tools\":[],\"toolChoice\":null},"
				+ "\"response\":null}";
	}

	/** A pending request as a replica adds it: its hash, and its digest on the stream. */
	private void write(String ticket, String json) {
		RedisCommands<String, String> commands = this.redis.commands();
		String id = commands.xadd(RedisKeys.STREAM, Map.of("key", RedisKeys.digest(ticket)));
		commands.hset(RedisKeys.entry(ticket), Map.of("state", "PENDING", "ticket", ticket, "json", json, "id", id));
	}

	private static LlmGateway gateway(ApplicationContext replica) {
		return replica.getBean(LlmGateway.class);
	}

}
