package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.LlmGateway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ApplicationContext;

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

	@RegisterExtension
	final RedisFleet redis = new RedisFleet().withFaultProxy();

	// a prompt's first call fails, so that it is deferred; its background attempt is answered
	private final FirstCallFailsProvider provider = this.redis.closeAfterEach(new FirstCallFailsProvider());

	@Test
	void eventOfAnEndThatCountedOnAReplicaGoneBeforeItsReplyIsPublishedOnceByTheReplicaThatTakesOver() {
		RedisFleet.Script end = this.redis.loadScript("deferred-end.lua");
		RedisFaultProxy proxy = this.redis.proxy();
		String[] common = RedisFleet.deferringPrimary(this.provider.baseUrl(), "300ms", 5,
				"llm.shared-state.key-prefix=" + PREFIX);
		Replicas.run(this.redis.replicasAThroughProxyAndB(common), (replicas) -> {
			ApplicationContext a = replicas.get(0);
			ApplicationContext b = replicas.get(1);
			proxy.watch(end.sha());
			proxy.loseReplyAndPartition(end.sha(), end.firstLine());
			ChatResponse deferred = a.getBean(LlmGateway.class)
				.chat(ChatRequest.builder().user("taken over").deferrable(true).build())
				.block(Duration.ofSeconds(30));
			assertThat(deferred.tier()).isEqualTo(Tier.DEFERRED);
			String ticket = deferred.ticket();
			// a's end ran in Redis, and a is cut off before it heard so
			await().atMost(Duration.ofSeconds(20)).until(() -> proxy.lost() == 1);
			assertThat(proxy.partitioned()).isTrue();
			assertThat(this.redis.commands().hget(PREFIX + "deferred:" + RedisKeys.digest(ticket), "by")).isEqualTo("a");

			// b takes a's message over once a is unheard for replica-timeout (3 s), and publishes the event
			await().atMost(Duration.ofSeconds(20)).until(() -> events(b, ticket).size() == 1);
			assertThat(events(b, ticket)).containsExactly("answer to taken over");
			assertThat(events(a, ticket)).isEmpty();
			DeferredResult onB = b.getBean(LlmGateway.class).deferred(ticket).block(Duration.ofSeconds(5));
			assertThat(onB.state()).isEqualTo(DeferredResult.State.COMPLETED);
			assertThat(onB.response().content()).isEqualTo("answer to taken over");
			await().atMost(Duration.ofSeconds(10))
				.untilAsserted(() -> assertThat(this.redis.commands().xlen(PREFIX + "deferred")).isZero());

			// a is back, sends its end again, and learns that its event is out: it publishes none
			int ends = proxy.seen(end.sha());
			proxy.heal();
			await().atMost(Duration.ofSeconds(20)).until(() -> proxy.seen(end.sha()) > ends);
			await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(10))
				.until(() -> events(a, ticket).isEmpty() && events(b, ticket).size() == 1);
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(replica.getBean(DeferredQueue.class).pending()).isZero());
			}
			assertThat(this.provider.calls("taken over")).isEqualTo(2);
		});
	}

	private static List<String> events(ApplicationContext replica, String ticket) {
		return FleetEvents.completed(List.of(replica), ticket)
			.stream()
			.map(DeferredRequestCompletedEvent::getResponse)
			.map(ChatResponse::content)
			.toList();
	}

}
