package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.Test;

import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The retry budget of an endpoint (docs/capacity.md): retries at most {@code retry.budget} percent
 * of its calls over the last minute plus {@code retry.budget-min-per-second} a second; past it a
 * failure goes straight to the next endpoint. Over HTTP against a provider that always fails (what
 * it received is the measure), and the arithmetic on its own.
 */
class RetryBudgetTests {

	private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

	@Test
	void aSpentBudgetSendsTheFailureStraightToTheNextEndpoint() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			upstreams.primary().setDispatcher(failing());
			upstreams.backup().setDispatcher(answering());
			upstreams.withActuator()
				.withPropertyValues("llm.endpoints.primary.retry.budget=0",
						"llm.endpoints.primary.retry.budget-min-per-second=0")
				.run((context) -> {
					assertThat(chat(context).attempts()).extracting(Attempt::endpoint, Attempt::outcome)
						.containsExactly(tuple("primary", Outcome.SERVER_ERROR), tuple("backup", Outcome.SUCCESS));
					assertThat(upstreams.primary().getRequestCount()).as("no retry sent").isOne();
					CapacityDescriptor.Budget budget = context.getBean(LlmBreakersEndpoint.class)
						.breaker("primary")
						.capacity()
						.retryBudget();
					assertThat(budget.refused()).isOne();
					assertThat(budget.calls()).isOne();
					assertThat(budget.retries()).isZero();
					assertThat(context.getBean(MeterRegistry.class)
						.get(CapacityMeters.RETRIES_REFUSED)
						.tag(MeterTags.ENDPOINT, "primary")
						.functionCounter()
						.count()).isEqualTo(1);
				});
		}
	}

	@Test
	void aLoneCallStillGetsItsAttempts() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			upstreams.primary().setDispatcher(failing());
			upstreams.backup().setDispatcher(answering());
			// the built-in budget: 20 % of one call is no retry; the floor of 3 a second pays for them
			upstreams.withActuator().run((context) -> {
				assertThat(chat(context).attempts()).extracting(Attempt::endpoint, Attempt::outcome)
					.containsExactly(tuple("primary", Outcome.SERVER_ERROR), tuple("primary", Outcome.SERVER_ERROR),
							tuple("primary", Outcome.SERVER_ERROR), tuple("backup", Outcome.SUCCESS));
				assertThat(upstreams.primary().getRequestCount()).isEqualTo(3);
			});
		}
	}

	@Test
	void retriesAreAtMostTheBudgetsShareOfTheCallsOverTheLastMinutePlusTheFloor() {
		RetryBudget budget = new RetryBudget(EndpointSettings.RetrySettings.DEFAULT.withBudget(20f, 0));
		for (int i = 0; i < 10; i++) {
			budget.call(i * SECOND);
		}
		assertThat(budget.tryRetry(10 * SECOND)).isTrue();
		assertThat(budget.tryRetry(10 * SECOND)).isTrue();
		assertThat(budget.tryRetry(10 * SECOND)).as("20 % of 10 calls is 2 retries").isFalse();
		assertThat(budget.state(10 * SECOND)).isEqualTo(new RetryBudget.State(20f, 0, 10, 2, 0, 1));
		// a minute later the calls and retries have left the window
		assertThat(budget.state(70 * SECOND).calls()).isZero();
		assertThat(budget.tryRetry(70 * SECOND)).as("no calls, no floor").isFalse();

		RetryBudget floored = new RetryBudget(EndpointSettings.RetrySettings.DEFAULT.withBudget(0f, 1));
		for (int i = 0; i < 60; i++) {
			assertThat(floored.tryRetry(Duration.ofMillis(500).toNanos())).isTrue();
		}
		assertThat(floored.tryRetry(Duration.ofMillis(500).toNanos())).as("1 a second over a minute").isFalse();
	}

	private static Dispatcher failing() {
		return new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return Answers.error(503, "server_error");
			}
		};
	}

	private static Dispatcher answering() {
		return new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return Answers.completion("from backup");
			}
		};
	}

}
