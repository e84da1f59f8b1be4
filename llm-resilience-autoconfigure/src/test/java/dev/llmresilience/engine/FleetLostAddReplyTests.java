package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.context.ApplicationContext;

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

	@RegisterExtension
	final RedisFleet redis = new RedisFleet().withFaultProxy();

	// each prompt's first call fails, so that it is deferred; its background attempts are answered
	private final FirstCallFailsProvider provider = this.redis.closeAfterEach(new FirstCallFailsProvider());

	@Test
	void requestWhoseAddReplyIsLostRunsOnceAndEndsOnce() {
		RedisFleet.Script add = this.redis.loadScript("deferred-add.lua");
		RedisFaultProxy proxy = this.redis.proxy();
		String[] common = RedisFleet.deferringPrimary(this.provider.baseUrl(), "300ms", 5,
				"llm.shared-state.key-prefix=" + PREFIX);
		Replicas.run(this.redis.replicasAThroughProxyAndB(common), (replicas) -> {
			ApplicationContext a = replicas.get(0);
			Map<Integer, String> problems = new TreeMap<>();
			List<String> tickets = new ArrayList<>();
			for (int i = 0; i < REQUESTS; i++) {
				String prompt = "lost reply " + i;
				int lost = proxy.lost();
				// the script's SHA-1 (EVALSHA) or its first line (EVAL, should Redis have lost the script)
				proxy.loseReplyTo(add.sha(), add.firstLine());
				ChatResponse answer = gateway(a).chat(ChatRequest.builder().user(prompt).deferrable(true).build())
					.block(Duration.ofSeconds(60));
				assertThat(answer.tier()).isEqualTo(Tier.DEFERRED);
				tickets.add(answer.ticket());
				await().atMost(Duration.ofSeconds(20)).until(() -> proxy.lost() == lost + 1);
				String problem = awaitEnd(replicas, answer.ticket(), prompt);
				if (problem != null) {
					problems.put(i, problem);
				}
			}
			// a second run or end would come within a heartbeat or two
			int events = FleetEvents.completed(replicas).size();
			await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10))
				.until(() -> FleetEvents.completed(replicas).size() == events);
			for (int i = 0; i < REQUESTS; i++) {
				String ticket = tickets.get(i);
				int runs = this.provider.answers("lost reply " + i);
				long ended = FleetEvents.completed(replicas, ticket).size();
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
			long events = FleetEvents.completed(replicas, ticket).size();
			int runs = this.provider.answers(prompt);
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

}
