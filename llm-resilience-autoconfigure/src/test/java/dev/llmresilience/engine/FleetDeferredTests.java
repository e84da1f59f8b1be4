package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.LlmGateway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The deferred queue shared on a Redis Stream: requests queued concurrently on
 * three replicas each complete exactly once, with one event, on one replica, and
 * {@code deferred(ticket)} answers on every replica.
 */
class FleetDeferredTests {

	@RegisterExtension
	final RedisFleet redis = new RedisFleet();

	private final SwitchableProvider provider = this.redis.closeAfterEach(new SwitchableProvider());

	private List<ApplicationContextRunner> fleet() {
		List<ApplicationContextRunner> runners = new ArrayList<>();
		for (String name : List.of("a", "b", "c")) {
			runners.add(this.redis.replica(name, RedisFleet.deferringPrimary(this.provider.baseUrl(), "1s", 5)));
		}
		return runners;
	}

	@Test
	void requestsQueuedConcurrentlyOnThreeReplicasCompleteOnceEach() {
		Replicas.run(fleet(), (replicas) -> {
			int requests = 60;
			List<ChatResponse> answers = Flux.range(0, requests)
				.flatMap((i) -> gateway(replicas.get(i % 3)).chat(deferrable("question " + i)), 16)
				.subscribeOn(Schedulers.boundedElastic())
				.collectList()
				.block(Duration.ofSeconds(30));
			assertThat(answers).hasSize(requests).allSatisfy((answer) -> assertThat(answer.tier()).isEqualTo(Tier.DEFERRED));
			Map<String, String> questions = answers.stream()
				.collect(Collectors.toMap(ChatResponse::ticket, (answer) -> answer.attempts().get(0).endpoint()));
			assertThat(questions).hasSize(requests);
			this.provider.heal();

			await().atMost(Duration.ofSeconds(30)).until(() -> FleetEvents.completed(replicas).size() == requests);
			// and no request completes twice, even later
			await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
				.until(() -> FleetEvents.completed(replicas).size() == requests);
			List<DeferredRequestCompletedEvent> events = FleetEvents.completed(replicas);
			assertThat(events.stream().map(DeferredRequestCompletedEvent::getTicket).collect(Collectors.toSet()))
				.isEqualTo(questions.keySet());
			assertThat(this.provider.answers()).as("upstream answers: one per request").isEqualTo(requests);
			assertThat(replicas.stream().filter((replica) -> !FleetEvents.of(replica).completed.isEmpty()).count())
				.as("replicas that completed requests").isGreaterThan(1);
			for (DeferredRequestCompletedEvent event : events) {
				for (ApplicationContext replica : replicas) {
					DeferredResult result = gateway(replica).deferred(event.getTicket()).block(Duration.ofSeconds(5));
					assertThat(result.state()).isEqualTo(DeferredResult.State.COMPLETED);
					assertThat(result.response().content()).isEqualTo(event.getResponse().content())
						.startsWith("answer to question ");
					assertThat(result.response().ticket()).isEqualTo(event.getTicket());
				}
			}
			assertThat(replicas).allSatisfy((replica) -> assertThat(FleetEvents.of(replica).failed).isEmpty());
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(30)).until(
						() -> replica.getBean(dev.llmresilience.engine.DeferredQueue.class).pending() == 0);
			}
		});
	}

	@Test
	void unknownTicketHasNoStateOnAnyReplica() {
		Replicas.run(fleet().subList(0, 2), (replicas) -> {
			for (ApplicationContext replica : replicas) {
				assertThat(gateway(replica).deferred("dfr_AAAAAAAAAAAAAAAAAAAAAA").block(Duration.ofSeconds(5))).isNull();
			}
		});
	}

	private static ChatRequest deferrable(String prompt) {
		return ChatRequest.builder().user(prompt).deferrable(true).build();
	}

	private static LlmGateway gateway(ApplicationContext replica) {
		return replica.getBean(LlmGateway.class);
	}

}
