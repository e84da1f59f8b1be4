package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.SharedState;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import redis.embedded.RedisServer;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * What shared state adds to a call: one replica calls a loopback provider that answers at once,
 * one call at a time, with the call-volume guard and the budget on (so that every call takes a
 * guard permit, records its breaker outcome and adds its cost to the fleet's), first with local
 * state, then sharing on a healthy Redis, on a Redis frozen for the whole run ({@code DEBUG SLEEP}:
 * slow, then unavailable once two heartbeats time out), and on a Redis that is stopped.
 */
final class SharedStateLatency {

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");

	private static final int FROZEN_SECONDS = 20;

	/** Where the state is while the calls are measured. */
	enum Condition {

		LOCAL_STATE, REDIS_HEALTHY, REDIS_FROZEN, REDIS_STOPPED

	}

	private SharedStateLatency() {
	}

	/**
	 * Measure each condition in turn on one replica (a local one for {@code LOCAL_STATE}).
	 * @param calls measured calls per condition (after as many to warm up; 5,000 at most while frozen)
	 * @return per condition, the sorted latencies (ns)
	 */
	static Map<Condition, long[]> run(int calls) {
		int port = FleetSupport.freePort();
		RedisServer redis = FleetSupport.redis(port);
		try (StubProvider provider = new StubProvider("provider", Duration.ZERO, StubProvider.FailureMode.HTTP_500, false)) {
			Map<Condition, long[]> results = new java.util.EnumMap<>(Condition.class);
			try (AnnotationConfigApplicationContext local = FleetSupport.replica(properties(provider, null, port))) {
				results.put(Condition.LOCAL_STATE, measure(local, calls, true));
			}
			try (AnnotationConfigApplicationContext shared = FleetSupport.replica(properties(provider, "latency", port))) {
				results.put(Condition.REDIS_HEALTHY, measure(shared, calls, true));
				try (RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", port));
						StatefulRedisConnection<String, String> connection = client.connect()) {
					CompletableFuture<String> frozen = connection.async()
						.dispatch(CommandType.DEBUG, new StatusOutput<>(StringCodec.UTF8),
								new CommandArgs<>(StringCodec.UTF8).add("SLEEP").add(FROZEN_SECONDS))
						.toCompletableFuture();
					results.put(Condition.REDIS_FROZEN, measure(shared, Math.min(calls, 5_000), false));
					if (frozen.isDone()) {
						System.out.println("warning: Redis woke up before the frozen run ended");
					}
					frozen.join(); // a frozen redis-server ends only once it wakes
					FleetSupport.stop(redis);
				}
				long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
				while (shared.getBean(SharedState.class).status().available() && System.nanoTime() < until) {
					Thread.onSpinWait();
				}
				results.put(Condition.REDIS_STOPPED, measure(shared, calls, false));
			}
			return results;
		}
	}

	private static long[] measure(AnnotationConfigApplicationContext replica, int calls, boolean warmUp) {
		LlmGateway gateway = replica.getBean(LlmGateway.class);
		for (int i = 0; warmUp && i < calls; i++) {
			gateway.chat(REQUEST).block(Duration.ofSeconds(10));
		}
		LatencyRecorder recorder = new LatencyRecorder(calls);
		for (int i = 0; i < calls; i++) {
			long start = System.nanoTime();
			gateway.chat(REQUEST).block(Duration.ofSeconds(10));
			recorder.record(System.nanoTime() - start);
		}
		return recorder.sorted();
	}

	private static Map<String, Object> properties(StubProvider provider, String name, int redisPort) {
		Map<String, Object> properties = (name != null) ? FleetSupport.shared(redisPort, name) : new java.util.LinkedHashMap<>();
		properties.put("llm.shared-state.key-prefix", "latency:");
		properties.put("llm.endpoints.primary.base-url", provider.baseUrl());
		properties.put("llm.endpoints.primary.model", "primary-model");
		properties.put("llm.endpoints.primary.price.input-per-million", 2.5);
		properties.put("llm.endpoints.primary.price.output-per-million", 10.0);
		properties.put("llm.gateway.guard.max-calls-per-hour", 100_000_000);
		properties.put("llm.gateway.budget.max-cost-per-day", 1_000_000);
		return properties;
	}

}
