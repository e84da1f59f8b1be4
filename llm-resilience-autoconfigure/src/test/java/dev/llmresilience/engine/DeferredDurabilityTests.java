package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A ticket is a request kept: with Redis, the DEFERRED answer comes once Redis has the request
 * ({@code durable: true}), and a Redis that does not answer in time leaves the request held on its
 * replica ({@code durable: false}) rather than delaying the caller; when that add did reach Redis
 * (its reply was lost to the timeout), the request still runs once, and only once Redis says where
 * it is. Redis holds writes with {@code CLIENT PAUSE ... WRITE}, so the commands sent meanwhile run
 * when the pause ends.
 */
class DeferredDurabilityTests {

	@RegisterExtension
	final RedisFleet redis = new RedisFleet();

	private final SwitchableProvider provider = this.redis.closeAfterEach(new SwitchableProvider());

	private List<ApplicationContextRunner> replica(String timeout) {
		return List.of(this.redis.replica("a", RedisFleet.deferringPrimary(this.provider.baseUrl(), "1s", 10,
				"llm.shared-state.timeout=" + timeout)));
	}

	@Test
	void theTicketComesOnceRedisHasTheRequest() {
		Replicas.run(replica("10s"), (replicas) -> {
			ApplicationContext a = replicas.get(0);
			warmUp(a);
			// Redis runs no write for 3 s, less than the command timeout (10 s): the add waits, and so does the ticket
			long paused = System.nanoTime();
			pauseWrites(3000);
			ChatResponse answer = defer(a, "keep me");
			assertThat(Duration.ofNanos(System.nanoTime() - paused)).as("answered after Redis ran the add")
				.isGreaterThanOrEqualTo(Duration.ofSeconds(3));
			assertThat(answer.tier()).isEqualTo(Tier.DEFERRED);
			DeferredResult result = a.getBean(LlmGateway.class).deferred(answer.ticket()).block(Duration.ofSeconds(5));
			assertThat(result.state()).isEqualTo(DeferredResult.State.PENDING);
			assertThat(result.durable()).as("in Redis when the ticket was given").isTrue();
			assertThat(this.redis.commands().hget(RedisKeys.entry(answer.ticket()), "state")).isEqualTo("PENDING");
			assertThat(a.getBean(LlmBreakersEndpoint.class).breakers().deferred().notDurable()).isZero();

			this.provider.heal();
			await().atMost(Duration.ofSeconds(30)).until(() -> FleetEvents.of(a).completed.size() == 1);
			assertThat(this.provider.answers()).isOne();
		});
	}

	@Test
	void anAddRedisDoesNotAcknowledgeInTimeIsHeldThenRunsOnce() {
		Replicas.run(replica("2s"), (replicas) -> {
			ApplicationContext a = replicas.get(0);
			warmUp(a);
			// no write for longer than the command timeout (2 s): the ticket comes without Redis's word, and the
			// add, queued in Redis, runs when the pause ends: its reply is lost to the replica
			long paused = System.nanoTime();
			pauseWrites(6000);
			ChatResponse answer = defer(a, "lost reply");
			assertThat(answer.tier()).isEqualTo(Tier.DEFERRED);
			DeferredResult held = a.getBean(LlmGateway.class).deferred(answer.ticket()).block(Duration.ofSeconds(5));
			assertThat(Duration.ofNanos(System.nanoTime() - paused)).as("answered while Redis held the add")
				.isLessThan(Duration.ofSeconds(6));
			assertThat(held.state()).isEqualTo(DeferredResult.State.PENDING);
			assertThat(held.durable()).as("Redis did not acknowledge it").isFalse();
			await().atMost(Duration.ofSeconds(30))
				.until(() -> this.redis.commands().hget(RedisKeys.entry(answer.ticket()), "state") != null);
			this.provider.heal();

			await().atMost(Duration.ofSeconds(30)).until(() -> FleetEvents.of(a).completed.size() == 1);
			// and no second run, even later
			await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
				.until(() -> FleetEvents.of(a).completed.size() == 1 && this.provider.answers() == 1);
			DeferredResult completed = a.getBean(LlmGateway.class).deferred(answer.ticket()).block(Duration.ofSeconds(5));
			assertThat(completed.state()).isEqualTo(DeferredResult.State.COMPLETED);
			assertThat(completed.durable()).isTrue();
			await().atMost(Duration.ofSeconds(30)).until(() -> a.getBean(DeferredQueue.class).pending() == 0);
			assertThat(this.redis.commands().xlen(RedisKeys.STREAM)).isZero();
		});
	}

	/** Hold every write (and script) for a while; reads go on. In effect once Redis has answered. */
	private void pauseWrites(long millis) {
		this.redis.commands()
			.dispatch(CommandType.CLIENT, new StatusOutput<>(StringCodec.UTF8),
					new CommandArgs<>(StringCodec.UTF8).add("PAUSE").add(millis).add("WRITE"));
	}

	/** A first call, so that the deferred one is not slowed by what a first call sets up. */
	private static void warmUp(ApplicationContext replica) {
		assertThat(replica.getBean(LlmGateway.class).chat(ChatRequest.ofUser("warm up")).block(Duration.ofSeconds(30))
			.tier()).isEqualTo(Tier.BUSY);
	}

	private static ChatResponse defer(ApplicationContext replica, String prompt) {
		return replica.getBean(LlmGateway.class)
			.chat(ChatRequest.builder().user(prompt).deferrable(true).build())
			.block(Duration.ofSeconds(30));
	}

}
