package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.stream.IntStream;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.engine.LlmBreakersEndpoint.BudgetDescriptor;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.DeferredEvents;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.MutableClock;
import io.micrometer.core.instrument.MeterRegistry;
import mockwebserver3.MockResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.fixture;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Cost and the daily budget: the cost of an answer from the endpoint's price and
 * the usage the provider reported, and a budget that, once spent, answers BUSY (DEFERRED for a
 * deferrable request) without calling upstream until the day rolls over in its time zone. The
 * recorded usage is the OpenAI spec's example (19 prompt and 10 completion tokens); days turn on
 * a {@link MutableClock}.
 */
class BudgetTests {

	/** 19 * 2.5 / 1e6 + 10 * 10 / 1e6. */
	private static final BigDecimal SPEC_COST = new BigDecimal("0.0001475");

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		VirtualTimeScheduler.reset();
		this.upstreams.close();
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.withActuator()
			.withPropertyValues("llm.defaults.retry.max-attempts=1", "llm.endpoints.primary.price.input-per-million=2.5",
					"llm.endpoints.primary.price.output-per-million=10");
	}

	private static MockResponse specAnswer() {
		return json(200, fixture("openai/spec-chat-completion-default.json"));
	}

	private void primaryAnswers(int times) {
		IntStream.range(0, times).forEach((i) -> this.upstreams.primary().enqueue(specAnswer()));
	}

	@Test
	void costIsThePriceOfTheRecordedUsage() {
		primaryAnswers(1);
		runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.usage()).isEqualTo(new Usage(19, 10));
			assertThat(response.cost()).isEqualTo(SPEC_COST);
		});
	}

	@Test
	void endpointWithoutAPriceHasNoCost() {
		this.upstreams.backup().enqueue(specAnswer());
		runner().run((context) -> {
			FakeUpstream.endpoint(context, "primary").circuitBreaker().transitionToForcedOpenState();
			ChatResponse response = chat(context);
			assertThat(response.endpoint()).isEqualTo("backup");
			assertThat(response.usage()).isEqualTo(new Usage(19, 10));
			assertThat(response.cost()).isNull();
		});
	}

	@Test
	void spendingIsAddedUpWithNoBudget() {
		primaryAnswers(2);
		runner().run((context) -> {
			chat(context);
			chat(context);
			BudgetDescriptor budget = budget(context);
			assertThat(budget.maxCostPerDay()).isZero();
			assertThat(budget.spentToday()).isEqualByComparingTo(SPEC_COST.add(SPEC_COST));
			assertThat(budget.tripped()).isFalse();
		});
	}

	@Test
	void spentBudgetAnswersBusyWithoutCallingUpstreamAndDefersADeferrableRequest() {
		primaryAnswers(3);
		runner().withPropertyValues("llm.gateway.budget.max-cost-per-day=0.0002").run((context) -> {
			assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(budget(context).tripped()).isFalse();
			assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
			BudgetDescriptor spent = budget(context);
			assertThat(spent.maxCostPerDay()).isEqualByComparingTo("0.0002");
			assertThat(spent.spentToday()).isEqualByComparingTo("0.000295");
			assertThat(spent.tripped()).isTrue();
			assertThat(budgetTrips(context)).isEqualTo(1);

			ChatResponse busy = chat(context);
			assertThat(busy.tier()).isEqualTo(Tier.BUSY);
			assertThat(busy.attempts()).isEmpty();
			assertThat(busy.cost()).isNull();
			ChatResponse deferred = chat(context, ChatRequest.builder().user("hello").deferrable(true).build());
			assertThat(deferred.tier()).isEqualTo(Tier.DEFERRED);
			assertThat(deferred.ticket()).isNotNull();
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
			assertThat(budgetTrips(context)).isEqualTo(1);
		});
	}

	@Test
	void budgetRollsOverAtMidnightInItsTimeZone() {
		primaryAnswers(2);
		// 21:00 in Tokyo, still the same UTC day when Tokyo's next day starts
		MutableClock clock = MutableClock.at("2026-03-01T12:00:00Z");
		runner().withBean(BudgetGuard.class, () -> new BudgetGuard(new BigDecimal("0.0001"), clock, ZoneId.of("Asia/Tokyo")))
			.run((context) -> {
				assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
				assertThat(budget(context).tripped()).isTrue();

				clock.set(Instant.parse("2026-03-01T14:59:59Z"));
				assertThat(chat(context).tier()).isEqualTo(Tier.BUSY);
				assertThat(budget(context).spentToday()).isEqualByComparingTo(SPEC_COST);

				clock.advance(Duration.ofSeconds(1));
				assertThat(budget(context)).isEqualTo(new BudgetDescriptor(new BigDecimal("0.0001"), BigDecimal.ZERO, false));
				assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
				assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
				assertThat(budgetTrips(context)).isEqualTo(2);
			});
	}

	@Test
	void deferredRequestWaitsOutTheSpentBudgetAndCompletesOnTheNextDay() {
		primaryAnswers(2);
		MutableClock clock = MutableClock.at("2026-03-01T23:50:00Z");
		VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
		runner().withPropertyValues("llm.gateway.deferral.delay=5m", "llm.gateway.deferral.max-attempts=3")
			.withBean(BudgetGuard.class, () -> new BudgetGuard(new BigDecimal("0.0001"), clock, ZoneId.of("UTC")))
			.withBean(DeferredEvents.class)
			.run((context) -> {
				chat(context);
				String ticket = chat(context, ChatRequest.builder().user("nightly report").deferrable(true).build()).ticket();
				LlmGateway gateway = context.getBean(LlmGateway.class);

				time.advanceTimeBy(Duration.ofMinutes(5));
				assertThat(gateway.deferred(ticket).block().state()).isEqualTo(DeferredResult.State.PENDING);
				assertThat(this.upstreams.primary().getRequestCount()).isOne();

				clock.set(Instant.parse("2026-03-02T00:00:00Z"));
				time.advanceTimeBy(Duration.ofMinutes(10));
				DeferredRequestCompletedEvent completed = context.getBean(DeferredEvents.class)
					.next(DeferredRequestCompletedEvent.class);
				assertThat(completed.getTicket()).isEqualTo(ticket);
				assertThat(completed.getResponse().cost()).isEqualTo(SPEC_COST);
				assertThat(gateway.deferred(ticket).block().state()).isEqualTo(DeferredResult.State.COMPLETED);
				assertThat(budget(context).spentToday()).isEqualByComparingTo(SPEC_COST);
			});
	}

	private static BudgetDescriptor budget(ApplicationContext context) {
		return context.getBean(LlmBreakersEndpoint.class).breakers().budget();
	}

	private static double budgetTrips(ApplicationContext context) {
		return context.getBean(MeterRegistry.class).get("llm.gateway.budget.trips").functionCounter().count();
	}

}
