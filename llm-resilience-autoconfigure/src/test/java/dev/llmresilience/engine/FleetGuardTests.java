package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.LlmBreakersEndpoint.BreakersDescriptor;
import dev.llmresilience.support.Answers;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The call-volume guard and the daily budget count the fleet's calls and cost:
 * three replicas behind a round robin make exactly {@code max-calls-per-hour} upstream calls in
 * all, and every replica's actuator shows the fleet's figures.
 */
class FleetGuardTests {

	@RegisterExtension
	final RedisFleet redis = new RedisFleet().clearOfTheHour(Duration.ofSeconds(60));

	private final MockWebServer provider = new MockWebServer();

	@BeforeEach
	void start() throws Exception {
		this.provider.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return Answers.completion("fine"); // 5 prompt and 2 completion tokens
			}
		});
		this.provider.start();
	}

	@AfterEach
	void stop() {
		this.provider.close();
	}

	private List<org.springframework.boot.test.context.runner.ApplicationContextRunner> fleet(String... properties) {
		List<org.springframework.boot.test.context.runner.ApplicationContextRunner> runners = new ArrayList<>();
		for (String name : List.of("a", "b", "c")) {
			runners.add(this.redis.replica(name, "llm.endpoints.primary.base-url=" + this.provider.url("/v1"),
					"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1")
				.withPropertyValues(properties));
		}
		return runners;
	}

	@Test
	void threeReplicasMakeExactlyTheGuardsCallsInAll() {
		Replicas.run(fleet("llm.gateway.guard.max-calls-per-hour=30"), (replicas) -> {
			int answered = 0;
			for (int i = 0; i < 60; i++) {
				ChatResponse answer = chat(replicas.get(i % 3));
				answered += (answer.tier() == Tier.PRIMARY) ? 1 : 0;
			}
			assertThat(this.provider.getRequestCount()).isEqualTo(30);
			assertThat(answered).isEqualTo(30);
			for (ApplicationContext replica : replicas) {
				await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
					BreakersDescriptor report = replica.getBean(LlmBreakersEndpoint.class).breakers();
					assertThat(report.guard().callsThisHour()).isEqualTo(30);
					assertThat(report.guard().tripped()).isTrue();
					assertThat(report.sharedState().available()).isTrue();
					assertThat(report.sharedState().replicas()).isEqualTo(3);
				});
			}
		});
	}

	@Test
	void budgetAddsUpTheFleetsCostAndTripsEveryReplica() {
		// each answer costs 5 x 1.0 + 2 x 3.0 per million tokens = 0.000011; the budget allows 4 of them
		Replicas.run(fleet("llm.endpoints.primary.price.input-per-million=1.0",
				"llm.endpoints.primary.price.output-per-million=3.0", "llm.gateway.budget.max-cost-per-day=0.000044"),
				(replicas) -> {
					for (int i = 0; replicas.stream().noneMatch(FleetGuardTests::budgetSpent) && i < 12; i++) {
						assertThat(chat(replicas.get(i % 3)).cost()).isEqualByComparingTo("0.000011");
					}
					await().atMost(Duration.ofSeconds(30)).until(() -> replicas.stream().allMatch(FleetGuardTests::budgetSpent));
					BigDecimal spent = new BigDecimal("0.000011").multiply(BigDecimal.valueOf(this.provider.getRequestCount()));
					// 4 answers spend it; each replica checks the budget before a call, so a call or two may start
					// on a replica that has not yet heard (one Redis round trip and a message) that it is spent
					assertThat(this.provider.getRequestCount()).isBetween(4, 7);
					int before = this.provider.getRequestCount();
					for (ApplicationContext replica : replicas) {
						assertThat(chat(replica).tier()).isEqualTo(Tier.BUSY);
						await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
								replica.getBean(LlmBreakersEndpoint.class).breakers().budget().spentToday())
							.isEqualByComparingTo(spent));
					}
					assertThat(this.provider.getRequestCount()).isEqualTo(before);
				});
	}

	private static boolean budgetSpent(ApplicationContext replica) {
		return replica.getBean(BudgetGuard.class).isTripped();
	}

}
