package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
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

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.context.ApplicationContext;
import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A deferred request whose {@code deferred-add} ran in Redis but whose reply was lost (the
 * connection dropped in between) is still run once and ended once: replica {@code a} reaches Redis
 * through a {@link RedisFaultProxy} that forwards the script and cuts the connection before its
 * reply gets back; {@code b} is connected directly. Whatever {@code a} then does (send the add
 * again, run the request itself), the provider answers the request's background attempt once, the
 * fleet publishes one completion event, both replicas answer the ticket COMPLETED and nothing is
 * left pending. 10 requests in a row ({@code -Dllm.lost-add.requests}), each with its reply lost.
 */
class FleetLostAddReplyTests {

	private static final String PREFIX = "llm:lost:";

	private static final int REQUESTS = Integer.getInteger("llm.lost-add.requests", 10);

	private static final JsonMapper mapper = JsonMapper.builder().build();

	private RedisServerSupport redis;

	private RedisFaultProxy proxy;

	private FakeUpstream upstream;

	private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> answers = new ConcurrentHashMap<>();

	@BeforeEach
	void start() {
		this.redis = RedisServerSupport.start();
		this.proxy = new RedisFaultProxy(this.redis.port());
		this.upstream = FakeUpstream.of("provider");
		// each prompt's first call fails, so that it is deferred; its background attempts are answered
		this.upstream.server("provider").setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				String prompt = mapper.readTree(request.getBody().utf8()).get("messages").get(0).get("content").asString();
				if (FleetLostAddReplyTests.this.calls.computeIfAbsent(prompt, (key) -> new AtomicInteger())
					.incrementAndGet() == 1) {
					return Answers.error(503, "overloaded");
				}
				FleetLostAddReplyTests.this.answers.computeIfAbsent(prompt, (key) -> new AtomicInteger()).incrementAndGet();
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
	void requestWhoseAddReplyIsLostRunsOnceAndEndsOnce() throws Exception {
		String addScript = new ClassPathResource("dev/llmresilience/redis/deferred-add.lua")
			.getContentAsString(java.nio.charset.StandardCharsets.UTF_8);
		String sha = RedisScript.of(addScript).getSha1();
		try (RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", this.redis.port()));
				StatefulRedisConnection<String, String> redis = client.connect()) {
			// loaded beforehand, so that the EVALSHA the proxy sees is one Redis runs (not a NOSCRIPT)
			assertThat(redis.sync().scriptLoad(addScript)).isEqualTo(sha);
		}
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
					Map<Integer, String> problems = new java.util.TreeMap<>();
					List<String> tickets = new ArrayList<>();
					for (int i = 0; i < REQUESTS; i++) {
						String prompt = "lost reply " + i;
						int lost = this.proxy.lost();
						// the script's SHA-1 (EVALSHA) or its first line (EVAL, should Redis have lost the script)
						this.proxy.loseReplyTo(sha, addScript.substring(0, addScript.indexOf('\n')));
						ChatResponse answer = gateway(a).chat(ChatRequest.builder().user(prompt).deferrable(true).build())
							.block(Duration.ofSeconds(60));
						assertThat(answer.tier()).isEqualTo(Tier.DEFERRED);
						tickets.add(answer.ticket());
						await().atMost(Duration.ofSeconds(20)).until(() -> this.proxy.lost() == lost + 1);
						String problem = awaitEnd(replicas, answer.ticket(), prompt);
						if (problem != null) {
							problems.put(i, problem);
						}
					}
					// a second run or end would come within a heartbeat or two
					int events = completed(replicas).size();
					await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
						.until(() -> completed(replicas).size() == events);
					for (int i = 0; i < REQUESTS; i++) {
						String ticket = tickets.get(i);
						int runs = this.answers.getOrDefault("lost reply " + i, new AtomicInteger()).get();
						long ended = completed(replicas).stream().filter((e) -> e.getTicket().equals(ticket)).count();
						if (runs != 1 || ended != 1) {
							problems.putIfAbsent(i, runs + " successful attempt(s), " + ended + " completion event(s)");
						}
					}
					assertThat(problems).as(problems.size() + " of " + REQUESTS
							+ " requests whose add reply was lost did not run and end once").isEmpty();
					for (ApplicationContext replica : replicas) {
						await().atMost(Duration.ofSeconds(10))
							.untilAsserted(() -> assertThat(replica.getBean(DeferredQueue.class).pending())
								.as("pending requests on replica " + replicas.indexOf(replica)).isZero());
					}
				});
	}

	/** What went wrong with a request, or null once it ended once; 20 s at most. */
	private String awaitEnd(List<AssertableApplicationContext> replicas, String ticket, String prompt)
			throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		String state = "";
		while (System.nanoTime() < deadline) {
			List<String> states = replicas.stream()
				.map((replica) -> gateway(replica).deferred(ticket).block(Duration.ofSeconds(5)))
				.map((result) -> (result != null) ? result.state().name() : "unknown")
				.toList();
			long events = completed(replicas).stream().filter((e) -> e.getTicket().equals(ticket)).count();
			int runs = this.answers.getOrDefault(prompt, new AtomicInteger()).get();
			state = "states " + states + ", " + runs + " successful attempt(s), " + events + " completion event(s)";
			if (events > 1 || runs > 1) {
				return state;
			}
			if (events == 1 && states.stream().allMatch(DeferredResult.State.COMPLETED.name()::equals)) {
				return null;
			}
			Thread.sleep(50);
		}
		return "not ended in 20 s: " + state;
	}

	private static LlmGateway gateway(ApplicationContext replica) {
		return replica.getBean(LlmGateway.class);
	}

	private static List<DeferredRequestCompletedEvent> completed(List<AssertableApplicationContext> replicas) {
		return replicas.stream().flatMap((replica) -> replica.getBean(FleetEvents.class).completed.stream()).toList();
	}

}
