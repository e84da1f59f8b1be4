package dev.llmresilience.engine;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ApplicationContext;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The completion event of a deferred request comes even when the replica whose end counted is
 * gone before it could publish it: replica {@code a} reaches Redis through a
 * {@link RedisFaultProxy}, which lets {@code deferred-end} run in Redis (the end counts) and then
 * cuts {@code a} off before the reply gets back, as if {@code a} had died at that instant. Replica
 * {@code b} takes {@code a}'s messages over once {@code a} is unheard for {@code replica-timeout}
 * and publishes the event, with {@code a}'s answer. When {@code a} is back and sends its end
 * again, it learns that its end counted and that the event is out: it publishes none, so the fleet
 * publishes one event, not two.
 */
class FleetEventTakeoverTests {

	private static final String PREFIX = "llm:takeover:";

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private RedisServerSupport redis;

	private RedisFaultProxy proxy;

	private FakeUpstream upstream;

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	@BeforeEach
	void start() {
		this.redis = RedisServerSupport.start();
		this.proxy = new RedisFaultProxy(this.redis.port());
		this.upstream = FakeUpstream.of("provider");
		// a prompt's first call fails, so that it is deferred; its background attempt is answered
		this.upstream.server("provider").setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				String prompt = mapper.readTree(request.getBody().utf8()).get("messages").get(0).get("content").asString();
				if (FleetEventTakeoverTests.this.calls.computeIfAbsent(prompt, (key) -> new AtomicInteger())
					.incrementAndGet() == 1) {
					return Answers.error(503, "overloaded");
				}
				return Answers.completion("answer to " + prompt);
			}
		});
	}

	@AfterEach
	void stop() {
		this.upstream.close();
		this.proxy.close();
		this.redis.close();
	}

	@Test
	void eventOfAnEndThatCountedOnAReplicaGoneBeforeItsReplyIsPublishedOnceByTheReplicaThatTakesOver()
			throws Exception {
		String endScript = new ClassPathResource("dev/llmresilience/redis/deferred-end.lua")
			.getContentAsString(StandardCharsets.UTF_8);
		String sha = RedisScript.of(endScript).getSha1();
		try (RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", this.redis.port()));
				StatefulRedisConnection<String, String> redis = client.connect()) {
			// loaded beforehand, so that the EVALSHA the proxy sees is one Redis runs (not a NOSCRIPT)
			assertThat(redis.sync().scriptLoad(endScript)).isEqualTo(sha);
			String[] common = { "llm.shared-state.key-prefix=" + PREFIX,
					"llm.endpoints.primary.base-url=" + this.upstream.server("provider").url("/v1"),
					"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1",
					"llm.defaults.circuit-breaker.sliding-window-size=1000",
					"llm.defaults.circuit-breaker.minimum-number-of-calls=1000", "llm.gateway.deferral.delay=300ms",
					"llm.gateway.deferral.max-attempts=5" };
			Replicas.run(List.of(
					Replicas.replica(this.redis, "a", common)
						.withPropertyValues("spring.data.redis.port=" + this.proxy.port())
						.withBean(FleetEvents.class),
					Replicas.replica(this.redis, "b", common).withBean(FleetEvents.class)), (replicas) -> {
						ApplicationContext a = replicas.get(0);
						ApplicationContext b = replicas.get(1);
						this.proxy.watch(sha);
						this.proxy.loseReplyAndPartition(sha, endScript.substring(0, endScript.indexOf('\n')));
						ChatResponse deferred = a.getBean(LlmGateway.class)
							.chat(ChatRequest.builder().user("taken over").deferrable(true).build())
							.block(Duration.ofSeconds(30));
						assertThat(deferred.tier()).isEqualTo(Tier.DEFERRED);
						String ticket = deferred.ticket();
						// a's end ran in Redis, and a is cut off before it heard so
						await().atMost(Duration.ofSeconds(20)).until(() -> this.proxy.lost() == 1);
						assertThat(this.proxy.partitioned()).isTrue();
						assertThat(redis.sync().hget(PREFIX + "deferred:" + RedisKeys.digest(ticket), "by")).isEqualTo("a");

						// b takes a's message over once a is unheard for replica-timeout (3 s), and publishes the event
						await().atMost(Duration.ofSeconds(20)).until(() -> events(b, ticket).size() == 1);
						assertThat(events(b, ticket)).containsExactly("answer to taken over");
						assertThat(events(a, ticket)).isEmpty();
						DeferredResult onB = b.getBean(LlmGateway.class).deferred(ticket).block(Duration.ofSeconds(5));
						assertThat(onB.state()).isEqualTo(DeferredResult.State.COMPLETED);
						assertThat(onB.response().content()).isEqualTo("answer to taken over");
						await().atMost(Duration.ofSeconds(10))
							.untilAsserted(() -> assertThat(redis.sync().xlen(PREFIX + "deferred")).isZero());

						// a is back, sends its end again, and learns that its event is out: it publishes none
						int ends = this.proxy.seen(sha);
						this.proxy.heal();
						await().atMost(Duration.ofSeconds(20)).until(() -> this.proxy.seen(sha) > ends);
						await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10))
							.until(() -> events(a, ticket).isEmpty() && events(b, ticket).size() == 1);
						for (ApplicationContext replica : replicas) {
							await().atMost(Duration.ofSeconds(10))
								.untilAsserted(() -> assertThat(replica.getBean(DeferredQueue.class).pending()).isZero());
						}
						assertThat(this.calls.get("taken over")).hasValue(2);
					});
		}
	}

	private static List<String> events(ApplicationContext replica, String ticket) {
		return replica.getBean(FleetEvents.class)
			.completed
			.stream()
			.filter((event) -> event.getTicket().equals(ticket))
			.map(DeferredRequestCompletedEvent::getResponse)
			.map(ChatResponse::content)
			.toList();
	}

}
