package dev.llmresilience.engine;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.LlmGateway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;

import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
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

	private RedisServerSupport redis;

	private SwitchableProvider provider;

	@BeforeEach
	void start() throws Exception {
		this.redis = RedisServerSupport.start();
		this.provider = new SwitchableProvider();
	}

	@AfterEach
	void stop() {
		this.provider.close();
		this.redis.close();
	}

	private List<ApplicationContextRunner> fleet() {
		List<ApplicationContextRunner> runners = new ArrayList<>();
		for (String name : List.of("a", "b", "c")) {
			runners.add(Replicas.replica(this.redis, name, "llm.endpoints.primary.base-url=" + this.provider.baseUrl(),
					"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1",
					// the outage must not open the breaker: the background attempts are to reach the provider
					"llm.defaults.circuit-breaker.sliding-window-size=500",
					"llm.defaults.circuit-breaker.minimum-number-of-calls=500", "llm.gateway.deferral.delay=1s",
					"llm.gateway.deferral.max-attempts=5")
				.withBean(FleetEvents.class));
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

			await().atMost(Duration.ofSeconds(30)).until(() -> completed(replicas).size() == requests);
			// and no request completes twice, even later
			await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3))
				.until(() -> completed(replicas).size() == requests);
			List<DeferredRequestCompletedEvent> events = completed(replicas);
			assertThat(events.stream().map(DeferredRequestCompletedEvent::getTicket).collect(Collectors.toSet()))
				.isEqualTo(questions.keySet());
			assertThat(this.provider.answers()).as("upstream answers: one per request").isEqualTo(requests);
			assertThat(replicas.stream().filter((replica) -> !events(replica).completed.isEmpty()).count())
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
			assertThat(replicas).allSatisfy((replica) -> assertThat(events(replica).failed).isEmpty());
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

	private static FleetEvents events(ApplicationContext replica) {
		return replica.getBean(FleetEvents.class);
	}

	private static List<DeferredRequestCompletedEvent> completed(List<AssertableApplicationContext> replicas) {
		return replicas.stream().flatMap((replica) -> events(replica).completed.stream()).toList();
	}

}
