package dev.llmresilience.sample;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import redis.embedded.RedisServer;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.test.util.TestSocketUtils;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two replicas of the sample on one Redis (a real redis-server on a free loopback port), started
 * as the README says: {@code --llm.shared-state.type=redis --spring.data.redis.port=N}. With each
 * simulated primary failing, the primary's breaker opens on both after five failures in all (the
 * sample's {@code minimum-number-of-calls}), where each would otherwise need five of its own.
 */
class SharedStateSampleTests {

	private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
	};

	private RedisServer redis;

	private int redisPort;

	private ConfigurableApplicationContext first;

	private ConfigurableApplicationContext second;

	@BeforeEach
	void start() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			this.redisPort = socket.getLocalPort();
		}
		this.redis = RedisServer.newRedisServer()
			.port(this.redisPort)
			.bind("127.0.0.1")
			.setting("save \"\"")
			.setting("appendonly no")
			.setting("dir " + Files.createTempDirectory("sample-redis"))
			.build();
		this.redis.start();
	}

	@AfterEach
	void stop() throws IOException {
		for (ConfigurableApplicationContext replica : new ConfigurableApplicationContext[] { this.first, this.second }) {
			if (replica != null) {
				replica.close();
			}
		}
		this.redis.stop();
	}

	private ConfigurableApplicationContext replica(int port) {
		return new SpringApplicationBuilder(SampleApplication.class).run("--server.port=" + port,
				"--llm.shared-state.type=redis", "--spring.data.redis.port=" + this.redisPort,
				"--spring.data.redis.host=127.0.0.1", "--llm.shared-state.heartbeat=200ms",
				"--llm.shared-state.replica-timeout=2s", "--llm.defaults.retry.initial-backoff=1ms");
	}

	@Test
	void twoReplicasOpenThePrimaryTogetherAfterFiveFailuresInAll() {
		int firstPort = TestSocketUtils.findAvailableTcpPort();
		this.first = replica(firstPort);
		int secondPort = TestSocketUtils.findAvailableTcpPort();
		this.second = replica(secondPort);
		WebClient a = WebClient.create("http://localhost:" + firstPort);
		WebClient b = WebClient.create("http://localhost:" + secondPort);
		// a learns of b from b's first heartbeat (every 200 ms here)
		await().atMost(Duration.ofSeconds(5))
			.untilAsserted(() -> assertThat(get(a, "/actuator/health/llm")).extractingByKey("details")
				.asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
				.extractingByKey("sharedState")
				.isEqualTo(Map.of("type", "redis", "available", true, "replica", replicaName(a), "replicas", 2)));
		mode(a, "error");
		mode(b, "error");

		// a's call: three failed attempts at its primary, then the backup; b's: two more, and the fleet opens it
		assertThat(chat(a)).containsEntry("tier", "FALLBACK");
		assertThat(breaker(a)).containsEntry("state", "CLOSED").containsEntry("failedCalls", 3);
		assertThat(chat(b)).containsEntry("tier", "FALLBACK");
		await().atMost(Duration.ofSeconds(5)).until(() -> "OPEN".equals(breaker(a).get("state")));
		assertThat(breaker(b)).containsEntry("state", "OPEN");
		assertThat(chat(a)).containsEntry("tier", "FALLBACK");
	}

	@Test
	void aDeferredRequestIsInRedisWhenItsTicketIsGiven() {
		int firstPort = TestSocketUtils.findAvailableTcpPort();
		this.first = replica(firstPort);
		int secondPort = TestSocketUtils.findAvailableTcpPort();
		this.second = replica(secondPort);
		WebClient a = WebClient.create("http://localhost:" + firstPort);
		WebClient b = WebClient.create("http://localhost:" + secondPort);
		mode(a, "error");
		a.post().uri("/sim/backup/mode").bodyValue(Map.of("mode", "error")).retrieve().toBodilessEntity()
			.block(Duration.ofSeconds(10));
		Map<String, Object> answer = a.post().uri("/api/chat")
			.bodyValue(Map.of("prompt", "Write the nightly report", "deferrable", true))
			.retrieve()
			.bodyToMono(JSON)
			.block(Duration.ofSeconds(20));
		assertThat(answer).containsEntry("tier", "DEFERRED");
		String ticket = (String) answer.get("ticket");
		assertThat(get(a, "/api/deferred/" + ticket)).containsEntry("state", "PENDING").containsEntry("durable", true);
		// the other replica reads it from Redis
		assertThat(get(b, "/api/deferred/" + ticket)).containsEntry("state", "PENDING").containsEntry("durable", true);
		assertThat(get(a, "/actuator/llmbreakers")).extractingByKey("deferred")
			.asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
			.containsEntry("notDurable", 0);
	}

	private static String replicaName(WebClient client) {
		Map<String, Object> breakers = get(client, "/actuator/llmbreakers");
		@SuppressWarnings("unchecked")
		Map<String, Object> shared = (Map<String, Object>) breakers.get("sharedState");
		return (String) shared.get("replica");
	}

	private static Map<String, Object> chat(WebClient client) {
		return client.post().uri("/api/chat").bodyValue(Map.of("prompt", "Hello")).retrieve().bodyToMono(JSON)
			.block(Duration.ofSeconds(20));
	}

	private static void mode(WebClient client, String mode) {
		client.post().uri("/sim/primary/mode").bodyValue(Map.of("mode", mode)).retrieve().toBodilessEntity()
			.block(Duration.ofSeconds(10));
	}

	private static Map<String, Object> breaker(WebClient client) {
		return get(client, "/actuator/llmbreakers/primary");
	}

	private static Map<String, Object> get(WebClient client, String path) {
		return client.get().uri(path).retrieve().bodyToMono(JSON).block(Duration.ofSeconds(10));
	}

}
