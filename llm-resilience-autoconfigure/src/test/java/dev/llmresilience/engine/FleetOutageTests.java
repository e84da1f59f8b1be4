package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.StatusOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.CommandType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.FakeUpstream.chat;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis slow, stopped and started again (empty) under two running replicas:
 * calls go on with each replica's own state and never wait for Redis; one WARN per replica when
 * the outage starts; the {@code llm} health shows it and stays UP; and when Redis is back, what
 * each replica did meanwhile (a state set by hand, calls counted, a deferred request taken) is
 * shared again.
 */
@ExtendWith(OutputCaptureExtension.class)
class FleetOutageTests {

	private static final String UNAVAILABLE = "Shared LLM state on Redis is unavailable";

	@RegisterExtension
	final RedisFleet redis = new RedisFleet().clearOfTheHour(Duration.ofSeconds(90));

	private SwitchableProvider provider;

	private SwitchableProvider flaky;

	@BeforeEach
	void start() throws Exception {
		this.provider = new SwitchableProvider();
		this.provider.heal();
		this.flaky = new SwitchableProvider();
	}

	@AfterEach
	void stop() {
		this.provider.close();
		this.flaky.close();
	}

	private List<org.springframework.boot.test.context.runner.ApplicationContextRunner> fleet() {
		String[] properties = { "llm.endpoints.primary.base-url=" + this.provider.baseUrl(),
				"llm.endpoints.primary.model=primary-model", "llm.endpoints.spare.base-url=" + this.provider.baseUrl(),
				"llm.endpoints.spare.model=spare-model", "llm.endpoints.spare.priority=1",
				"llm.endpoints.flaky.base-url=" + this.flaky.baseUrl(), "llm.endpoints.flaky.model=flaky-model",
				"llm.endpoints.flaky.priority=2", "llm.routes.default=primary", "llm.routes.flaky=flaky",
				"llm.defaults.retry.max-attempts=1", "llm.gateway.guard.max-calls-per-hour=1000",
				"llm.gateway.deferral.delay=1s", "llm.gateway.deferral.max-attempts=10" };
		return List.of(this.redis.replica("a", properties), this.redis.replica("b", properties));
	}

	@Test
	void callsNeverWaitForARedisThatIsFrozen() {
		Replicas.run(fleet(), (replicas) -> {
			CompletableFuture<String> frozen = this.redis.connection()
				.async()
				.dispatch(CommandType.DEBUG, new StatusOutput<>(StringCodec.UTF8),
						new CommandArgs<>(StringCodec.UTF8).add("SLEEP").add(6))
				.toCompletableFuture();
			for (int i = 0; i < 20; i++) {
				assertThat(chat(replicas.get(i % 2)).tier()).isEqualTo(Tier.PRIMARY);
			}
			assertThat(frozen).as("Redis still frozen after the 20 calls").isNotDone();
			frozen.join();
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(30)).until(() -> calls(replica) == 20);
			}
		});
	}

	@Test
	void redisStoppedAndStartedAgainMidRun(CapturedOutput output) {
		Replicas.run(fleet(), (replicas) -> {
			ApplicationContext a = replicas.get(0);
			ApplicationContext b = replicas.get(1);
			for (int i = 0; i < 4; i++) {
				assertThat(chat(replicas.get(i % 2)).tier()).isEqualTo(Tier.PRIMARY);
			}
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(30)).until(() -> calls(replica) == 4);
			}

			this.redis.server().stop();
			for (int i = 0; i < 20; i++) {
				assertThat(chat(replicas.get(i % 2)).tier()).isEqualTo(Tier.PRIMARY);
			}
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(30)).until(() -> !sharedState(replica).get("available").equals(true));
				assertThat(health(replica).getStatus()).isEqualTo(Status.UP);
				assertThat(sharedState(replica)).containsEntry("type", "redis").containsKey("unavailableSince")
					.containsKey("problem");
			}
			a.getBean(LlmBreakersEndpoint.class).transition("spare", "FORCED_OPEN");
			ChatResponse deferred = a.getBean(LlmGateway.class)
				.chat(ChatRequest.builder().user("while redis was down").route("flaky").deferrable(true).build())
				.block(Duration.ofSeconds(10));
			assertThat(deferred.tier()).isEqualTo(Tier.DEFERRED);
			String ticket = deferred.ticket();
			assertThat(state(a, ticket)).isEqualTo(DeferredResult.State.PENDING);
			assertThat(durable(a, ticket)).as("held by a only while Redis is down").isFalse();
			assertThat(a.getBean(LlmBreakersEndpoint.class).breakers().deferred().notDurable()).isOne();
			assertThat(b.getBean(LlmGateway.class).deferred(ticket).block(Duration.ofSeconds(5))).isNull();
			assertThat(endpoint(b, "spare").circuitBreaker().getState()).isEqualTo(CircuitBreaker.State.CLOSED);
			for (int i = 0; i < 10; i++) {
				assertThat(chat(replicas.get(i % 2)).tier()).isEqualTo(Tier.PRIMARY);
			}
			assertThat(count(output.getAll(), UNAVAILABLE)).as("one WARN per replica for the whole outage").isEqualTo(2);

			this.redis.server().startAgain(); // empty: what the fleet knew is gone, each replica tells its part again
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(30)).until(() -> sharedState(replica).get("available").equals(true));
			}
			await().atMost(Duration.ofSeconds(30))
				.until(() -> endpoint(b, "spare").circuitBreaker().getState() == CircuitBreaker.State.FORCED_OPEN);
			// the request taken while Redis was down is in Redis now: b knows it
			await().atMost(Duration.ofSeconds(30)).until(() -> state(b, ticket) == DeferredResult.State.PENDING);
			assertThat(durable(b, ticket)).isTrue();
			await().atMost(Duration.ofSeconds(30)).until(() -> durable(a, ticket));
			assertThat(a.getBean(LlmBreakersEndpoint.class).breakers().deferred().notDurable()).isZero();
			this.flaky.heal();
			await().atMost(Duration.ofSeconds(30)).until(() -> FleetEvents.completed(replicas).size() == 1);
			assertThat(state(b, ticket)).isEqualTo(DeferredResult.State.COMPLETED);
			assertThat(state(a, ticket)).isEqualTo(DeferredResult.State.COMPLETED);
			// calls made while Redis was down, and since, are counted in the fleet's window (the 4 before were
			// lost with Redis's data)
			int made = 30 + this.flaky.requests();
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(30)).until(() -> calls(replica) == made);
			}
			// the channel works again: a state set by hand now reaches the other replica without a reconciliation
			b.getBean(LlmBreakersEndpoint.class).transition("spare", "CLOSED");
			await().atMost(Duration.ofSeconds(30))
				.until(() -> endpoint(a, "spare").circuitBreaker().getState() == CircuitBreaker.State.CLOSED);
			assertThat(count(output.getAll(), UNAVAILABLE)).isEqualTo(2);
			assertThat(count(output.getAll(), "Shared LLM state on Redis is available again")).isEqualTo(2);
		});
	}

	private static int calls(ApplicationContext replica) {
		return replica.getBean(LlmBreakersEndpoint.class).breakers().guard().callsThisHour();
	}

	private static boolean durable(ApplicationContext replica, String ticket) {
		return replica.getBean(LlmGateway.class).deferred(ticket).block(Duration.ofSeconds(5)).durable();
	}

	private static DeferredResult.State state(ApplicationContext replica, String ticket) {
		DeferredResult result = replica.getBean(LlmGateway.class).deferred(ticket).block(Duration.ofSeconds(5));
		return (result != null) ? result.state() : null;
	}

	private static Health health(ApplicationContext replica) {
		return replica.getBean(LlmHealthIndicator.class).health(true);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> sharedState(ApplicationContext replica) {
		return (Map<String, Object>) health(replica).getDetails().get("sharedState");
	}

	private static int count(String text, String phrase) {
		Matcher matcher = Pattern.compile(Pattern.quote(phrase)).matcher(text);
		int count = 0;
		while (matcher.find()) {
			count++;
		}
		return count;
	}

}
