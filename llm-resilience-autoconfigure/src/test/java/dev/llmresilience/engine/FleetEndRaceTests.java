package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Schedulers;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.context.ApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two replicas that both run one deferred request end it once: the first end to reach Redis
 * counts, the other is dropped, so the fleet publishes one completion event and every replica
 * answers the ticket with the winner's answer. Replica {@code a} queues each request and is then
 * taken for gone by the fleet (its heartbeat is an hour apart, and its last one is struck from
 * Redis), as a replica paused for longer than {@code replica-timeout} is, so {@code b} takes each
 * request over while {@code a} still runs it. The provider holds both attempts of a request until
 * both are there and answers them together, so that both ends reach Redis at the same moment.
 * 200 requests ({@code -Dllm.race.requests}), in rounds of 8.
 */
class FleetEndRaceTests {

	private static final String PREFIX = "llm:race:";

	private static final int REQUESTS = Integer.getInteger("llm.race.requests", 200);

	private static final int ROUND = 8;

	@RegisterExtension
	final RedisFleet redis = new RedisFleet();

	private final RacingProvider provider = this.redis.closeAfterEach(new RacingProvider());

	@Test
	void requestRunByTwoReplicasAtOnceEndsOnceWithTheWinnersAnswer() {
		// the first call of each request fails: that must not open the breaker
		String[] common = RedisFleet.deferringPrimary(this.provider.baseUrl(), "200ms", 5,
				"llm.shared-state.key-prefix=" + PREFIX);
		Replicas.run(List.of(
				this.redis.replica("a", common)
					.withPropertyValues("llm.shared-state.heartbeat=1h", "llm.shared-state.replica-timeout=2h"),
				this.redis.replica("b", common)), (replicas) -> {
					ApplicationContext a = replicas.get(0);
					// a's last heartbeat, long ago: b takes over what a holds at its next heartbeat
					this.redis.commands().zadd(PREFIX + "replicas", 0, "a");
					for (int round = 0; round * ROUND < REQUESTS; round++) {
						int first = round * ROUND;
						List<ChatResponse> answers = Flux.range(first, Math.min(ROUND, REQUESTS - first))
							.flatMap((i) -> gateway(a).chat(ChatRequest.builder().user("race " + i).deferrable(true).build()))
							.subscribeOn(Schedulers.boundedElastic())
							.collectList()
							.block(Duration.ofSeconds(30));
						assertThat(answers).allSatisfy((answer) -> assertThat(answer.tier()).isEqualTo(Tier.DEFERRED));
						await().atMost(Duration.ofSeconds(30)).until(() -> answers.stream()
							.allMatch((answer) -> FleetEvents.completed(replicas, answer.ticket()).size() >= 1));
					}
					// a second end would come within a heartbeat or two
					await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(5))
						.untilAsserted(() -> assertThat(FleetEvents.completed(replicas).size()).as("completion events, fleet-wide")
							.isEqualTo(REQUESTS));
					assertThat(this.provider.raced()).as("requests both replicas ran at once").isEqualTo(REQUESTS);
					List<DeferredRequestCompletedEvent> events = FleetEvents.completed(replicas);
					assertThat(events).as("one completion event per request, fleet-wide")
						.hasSize(REQUESTS)
						.extracting(DeferredRequestCompletedEvent::getTicket)
						.doesNotHaveDuplicates();
					assertThat(replicas.stream().mapToInt((replica) -> queue(replica).counts().completed()).sum())
						.as("ends that counted").isEqualTo(REQUESTS);
					for (DeferredRequestCompletedEvent event : events) {
						assertThat(this.provider.answers(event.getResponse().content()))
							.as("the event's answer is one the provider gave for that request")
							.isTrue();
						for (ApplicationContext replica : replicas) {
							DeferredResult result = gateway(replica).deferred(event.getTicket()).block(Duration.ofSeconds(5));
							assertThat(result.state()).isEqualTo(DeferredResult.State.COMPLETED);
							assertThat(result.response().content()).as("the stored answer is the winner's")
								.isEqualTo(event.getResponse().content());
						}
					}
					assertThat(replicas).allSatisfy((replica) -> assertThat(replica.getBean(FleetEvents.class).failed).isEmpty());
					// nothing left on the stream (a counts the fleet's pending requests at its heartbeat only: b's count)
					await().atMost(Duration.ofSeconds(10)).until(() -> queue(replicas.get(1)).pending() == 0);
					assertThat(this.redis.commands().xlen(PREFIX + "deferred")).as("messages left on the stream").isZero();
				});
	}

	private static LlmGateway gateway(ApplicationContext replica) {
		return replica.getBean(LlmGateway.class);
	}

	private static DeferredQueue queue(ApplicationContext replica) {
		return replica.getBean(DeferredQueue.class);
	}

	/**
	 * Fails each prompt's first call (the request is deferred), then holds its background attempts
	 * until two are there (10 s at most), and answers them together, each with an answer of its own.
	 */
	private static final class RacingProvider implements AutoCloseable {

		private static final JsonMapper mapper = JsonMapper.builder().build();

		private final FakeUpstream upstream = FakeUpstream.of("provider");

		private final MockWebServer server = this.upstream.server("provider");

		private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

		private final Map<String, CountDownLatch> pairs = new ConcurrentHashMap<>();

		private final List<String> given = new CopyOnWriteArrayList<>();

		private final AtomicInteger raced = new AtomicInteger();

		private final AtomicInteger answered = new AtomicInteger();

		RacingProvider() {
			this.server.setDispatcher(new Dispatcher() {
				@Override
				public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
					String prompt = mapper.readTree(request.getBody().utf8()).get("messages").get(0).get("content").asString();
					if (RacingProvider.this.calls.computeIfAbsent(prompt, (key) -> new AtomicInteger()).incrementAndGet() == 1) {
						return Answers.error(503, "overloaded");
					}
					CountDownLatch pair = RacingProvider.this.pairs.computeIfAbsent(prompt, (key) -> new CountDownLatch(2));
					pair.countDown();
					if (pair.await(10, TimeUnit.SECONDS) && RacingProvider.this.calls.get(prompt).get() == 3) {
						RacingProvider.this.raced.incrementAndGet();
					}
					String answer = "answer " + RacingProvider.this.answered.incrementAndGet() + " to " + prompt;
					RacingProvider.this.given.add(answer);
					return Answers.completion(answer);
				}
			});
		}

		String baseUrl() {
			return this.server.url("/v1").toString();
		}

		/** Requests whose two attempts were answered together (counted by each of the two). */
		int raced() {
			return this.raced.get() / 2;
		}

		boolean answers(String content) {
			return this.given.contains(content);
		}

		@Override
		public void close() {
			this.upstream.close();
		}

	}

}
