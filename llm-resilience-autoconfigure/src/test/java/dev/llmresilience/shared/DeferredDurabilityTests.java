package dev.llmresilience.shared;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import dev.llmresilience.actuate.LlmBreakersEndpoint;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.deferred.DeferredQueue;
import dev.llmresilience.gateway.LlmGateway;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A ticket is a request kept: with Redis, the DEFERRED answer comes once Redis has the request
 * ({@code durable: true}), and a Redis that does not answer in time leaves the request held on its
 * replica ({@code durable: false}) rather than delaying the caller; when that add did reach Redis
 * (its reply was lost to the timeout), the request still runs once, and only once Redis says where
 * it is. Redis is frozen with {@code DEBUG SLEEP}, so the commands sent meanwhile run when it wakes.
 */
class DeferredDurabilityTests {

	private RedisServerSupport redis;

	private SwitchableProvider provider;

	private RedisClient client;

	private StatefulRedisConnection<String, String> connection;

	@BeforeEach
	void start() throws Exception {
		this.redis = RedisServerSupport.start();
		this.provider = new SwitchableProvider();
		this.client = RedisClient.create(RedisURI.create("127.0.0.1", this.redis.port()));
		this.connection = this.client.connect();
	}

	@AfterEach
	void stop() {
		this.connection.close();
		this.client.shutdown();
		this.provider.close();
		this.redis.close();
	}

	private List<org.springframework.boot.test.context.runner.ApplicationContextRunner> replica() {
		return List.of(Replicas.replica(this.redis, "a", "llm.endpoints.primary.base-url=" + this.provider.baseUrl(),
				"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1",
				"llm.defaults.circuit-breaker.sliding-window-size=500",
				"llm.defaults.circuit-breaker.minimum-number-of-calls=500", "llm.gateway.deferral.delay=1s",
				"llm.gateway.deferral.max-attempts=10")
			.withBean(FleetEvents.class));
	}

	@Test
	void theTicketComesOnceRedisHasTheRequest() {
		Replicas.run(replica(), (replicas) -> {
			ApplicationContext a = replicas.get(0);
			// Redis asleep for 1 s, less than the command timeout (2 s): the add waits for it, and so does the ticket
			CompletableFuture<String> frozen = freeze(1);
			ChatResponse answer = defer(a, "keep me");
			assertThat(answer.tier()).isEqualTo(Tier.DEFERRED);
			DeferredResult result = a.getBean(LlmGateway.class).deferred(answer.ticket()).block(Duration.ofSeconds(5));
			assertThat(result.state()).isEqualTo(DeferredResult.State.PENDING);
			assertThat(result.durable()).as("in Redis when the ticket was given").isTrue();
			frozen.join();
			assertThat(this.connection.sync().hget(RedisKeys.entry(answer.ticket()), "state")).isEqualTo("PENDING");
			assertThat(a.getBean(LlmBreakersEndpoint.class).breakers().deferred().notDurable()).isZero();

			this.provider.heal();
			await().atMost(Duration.ofSeconds(30)).until(() -> events(a).completed.size() == 1);
			assertThat(this.provider.answers()).isOne();
		});
	}

	@Test
	void anAddRedisDoesNotAcknowledgeInTimeIsHeldThenRunsOnce() {
		Replicas.run(replica(), (replicas) -> {
			ApplicationContext a = replicas.get(0);
			// asleep for longer than the command timeout: the ticket comes without Redis's word, the add runs on waking
			CompletableFuture<String> frozen = freeze(4);
			ChatResponse answer = defer(a, "lost reply");
			assertThat(answer.tier()).isEqualTo(Tier.DEFERRED);
			assertThat(frozen).as("answered before Redis woke").isNotDone();
			DeferredResult held = a.getBean(LlmGateway.class).deferred(answer.ticket()).block(Duration.ofSeconds(5));
			assertThat(held.state()).isEqualTo(DeferredResult.State.PENDING);
			assertThat(held.durable()).as("Redis did not acknowledge it").isFalse();
			frozen.join();
			this.provider.heal();

			await().atMost(Duration.ofSeconds(30)).until(() -> events(a).completed.size() == 1);
			// and no second run, even later
			await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
				.until(() -> events(a).completed.size() == 1 && this.provider.answers() == 1);
			DeferredResult completed = a.getBean(LlmGateway.class).deferred(answer.ticket()).block(Duration.ofSeconds(5));
			assertThat(completed.state()).isEqualTo(DeferredResult.State.COMPLETED);
			assertThat(completed.durable()).isTrue();
			await().atMost(Duration.ofSeconds(30)).until(() -> a.getBean(DeferredQueue.class).pending() == 0);
			assertThat(this.connection.sync().xlen(RedisKeys.STREAM)).isZero();
		});
	}

	private CompletableFuture<String> freeze(int seconds) {
		return this.connection.async()
			.dispatch(CommandType.DEBUG, new StatusOutput<>(StringCodec.UTF8),
					new CommandArgs<>(StringCodec.UTF8).add("SLEEP").add(seconds))
			.toCompletableFuture();
	}

	private static ChatResponse defer(ApplicationContext replica, String prompt) {
		return replica.getBean(LlmGateway.class)
			.chat(ChatRequest.builder().user(prompt).deferrable(true).build())
			.block(Duration.ofSeconds(30));
	}

	private static FleetEvents events(ApplicationContext replica) {
		return replica.getBean(FleetEvents.class);
	}

}
