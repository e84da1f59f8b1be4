package dev.llmresilience.engine;

import java.time.Duration;
import java.util.stream.IntStream;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.LlmBreakersEndpoint.GuardDescriptor;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static dev.llmresilience.support.FakeUpstream.chat;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * The call-volume guard: {@code llm.gateway.guard.max-calls-per-hour} counts
 * every upstream attempt over all endpoints; once spent, calls get BUSY without touching any
 * upstream. What the servers received is the measure.
 */
class CallVolumeGuardTests {

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	private ApplicationContextRunner runner() {
		return this.upstreams.withActuator();
	}

	@Test
	void guardTripsAtExactlyTheConfiguredNumberOfUpstreamAttempts() {
		IntStream.range(0, 4).forEach((i) -> this.upstreams.primary().enqueue(completion("answer " + i)));
		this.upstreams.backup().enqueue(completion("backup answer"));
		runner().withPropertyValues("llm.gateway.guard.max-calls-per-hour=3").run((context) -> {
			assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(guard(context)).isEqualTo(new GuardDescriptor(3, 2, false));
			assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
			assertThat(guard(context)).isEqualTo(new GuardDescriptor(3, 3, true));
			assertThat(trips(context)).isZero();

			ChatResponse refused = chat(context);
			assertThat(refused.tier()).isEqualTo(Tier.BUSY);
			assertThat(refused.content()).isEqualTo("The service is busy right now. Please try again in a minute.");
			assertThat(refused.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
				.containsExactly(tuple("primary", Outcome.GUARD_TRIPPED));
			assertThat(chat(context).tier()).isEqualTo(Tier.BUSY);

			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(3);
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
			assertThat(guard(context)).isEqualTo(new GuardDescriptor(3, 3, true));
			assertThat(trips(context)).as("one trip per spent window").isEqualTo(1);
		});
	}

	@Test
	void retriesCountAsAttempts() {
		IntStream.range(0, 3).forEach((i) -> this.upstreams.primary().enqueue(error(503, "overloaded")));
		this.upstreams.backup().enqueue(completion("backup answer"));
		runner().withPropertyValues("llm.gateway.guard.max-calls-per-hour=2", "llm.defaults.retry.max-attempts=3")
			.run((context) -> {
				ChatResponse response = chat(context);
				assertThat(response.tier()).isEqualTo(Tier.BUSY);
				assertThat(response.attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.SERVER_ERROR, Outcome.SERVER_ERROR, Outcome.GUARD_TRIPPED);
				assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
				assertThat(this.upstreams.backup().getRequestCount()).isZero();
			});
	}

	@Test
	void breakerOpenRejectionsTakeNoPermit() {
		IntStream.range(0, 3).forEach((i) -> this.upstreams.backup().enqueue(completion("backup answer " + i)));
		runner().withPropertyValues("llm.gateway.guard.max-calls-per-hour=2").run((context) -> {
			endpoint(context, "primary").circuitBreaker().transitionToForcedOpenState();
			for (int i = 0; i < 2; i++) {
				ChatResponse response = chat(context);
				assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
				assertThat(response.attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.BREAKER_OPEN, Outcome.SUCCESS);
			}
			assertThat(guard(context).callsThisHour()).isEqualTo(2);
			assertThat(chat(context).attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.BREAKER_OPEN, Outcome.GUARD_TRIPPED);
			assertThat(this.upstreams.backup().getRequestCount()).isEqualTo(2);
		});
	}

	@Test
	void spentGuardAnswersBusyEvenToADeferrableRequest() {
		this.upstreams.primary().enqueue(completion("only answer"));
		runner().withPropertyValues("llm.gateway.guard.max-calls-per-hour=1").run((context) -> {
			chat(context);
			ChatResponse response = chat(context, ChatRequest.builder().user("batch job").deferrable(true).build());
			assertThat(response.tier()).isEqualTo(Tier.BUSY);
			assertThat(response.ticket()).isNull();
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
		});
	}

	@Test
	void guardIsOffByDefault() {
		IntStream.range(0, 5).forEach((i) -> this.upstreams.primary().enqueue(completion("answer " + i)));
		runner().run((context) -> {
			for (int i = 0; i < 5; i++) {
				assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
			}
			assertThat(guard(context)).isEqualTo(new GuardDescriptor(0, 0, false));
		});
	}

	@Test
	void windowIsFixedAndGivesEveryPermitBackAtOnceWhenItRenews() {
		CallVolumeGuard guard = new CallVolumeGuard(2, Duration.ofMillis(200));
		assertThat(guard.tryAcquire()).isTrue();
		assertThat(guard.tryAcquire()).isTrue();
		assertThat(guard.tryAcquire()).isFalse();
		assertThat(guard.isTripped()).isTrue();
		await().atMost(Duration.ofSeconds(5)).until(() -> !guard.isTripped());
		assertThat(guard.callsThisWindow()).isZero();
		assertThat(guard.tryAcquire()).isTrue();
		assertThat(guard.tryAcquire()).isTrue();
		assertThat(guard.trips()).isOne();
	}

	private static GuardDescriptor guard(ApplicationContext context) {
		return context.getBean(LlmBreakersEndpoint.class).breakers().guard();
	}

	private static double trips(ApplicationContext context) {
		return context.getBean(MeterRegistry.class).get("llm.gateway.guard.trips").functionCounter().count();
	}

}
