package dev.llmresilience.engine;

import java.time.Duration;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.FakeUpstream.Gate;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.micrometer.core.instrument.MeterRegistry;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static dev.llmresilience.support.Answers.answering;
import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code circuit-breaker.probe: synthetic}, the default: once the open state's wait has passed,
 * the library sends the half-open probes itself (the endpoint's model, one short user message, a
 * max-tokens of 1), so a breaker recovers with no user traffic, and users' calls go on to the next
 * endpoint until it has closed. Probes show in meters and in {@code /actuator/llmbreakers} and take
 * call-volume guard permits. Over real local HTTP, with a wait of 300 ms.
 */
class SyntheticProbeTests {

	private static final JsonMapper mapper = JsonMapper.builder().build();

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
		return this.upstreams.withActuator().withPropertyValues("llm.defaults.circuit-breaker.wait-duration-in-open-state=300ms");
	}

	@Test
	void openEndpointIsProbedByTheLibraryAndClosesWithNoUserTraffic() throws Exception {
		this.upstreams.primary().setDispatcher(answering("Hello"));
		runner().run((context) -> {
			CircuitBreaker breaker = endpoint(context, "primary").circuitBreaker();
			breaker.transitionToOpenState();
			await().atMost(Duration.ofSeconds(5)).until(() -> breaker.getState() == State.CLOSED);
			assertThat(this.upstreams.primary().getRequestCount()).as("the three probes").isEqualTo(3);
			for (int i = 0; i < 3; i++) {
				JsonNode probe = mapper.readTree(this.upstreams.primary().takeRequest().getBody().utf8());
				assertThat(probe.get("model").asString()).isEqualTo("primary-model");
				assertThat(probe.get("max_tokens").asInt()).isEqualTo(1);
				assertThat(probe.get("messages")).hasSize(1);
				assertThat(probe.get("messages").get(0).get("role").asString()).isEqualTo("user");
			}
			ProbeStats probes = endpoint(context, "primary").probes();
			assertThat(probes.mode()).isEqualTo(EndpointSettings.Probe.SYNTHETIC);
			assertThat(probes.sent()).isEqualTo(3);
			assertThat(probes.succeeded()).isEqualTo(3);
			assertThat(probes.lastOutcome()).isEqualTo(Outcome.SUCCESS);
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("llm.endpoint.probes").tag("llm.endpoint", "primary").tag("llm.outcome", "success")
				.functionCounter().count()).isEqualTo(3);
			assertThat(meters.get("llm.endpoint.probes").tag("llm.endpoint", "primary").tag("llm.outcome", "failure")
				.functionCounter().count()).isZero();
			LlmBreakersEndpoint.ProbeDescriptor shown = context.getBean(LlmBreakersEndpoint.class)
				.breaker("primary")
				.probes();
			assertThat(shown.mode()).isEqualTo("SYNTHETIC");
			assertThat(shown.sent()).isEqualTo(3);
			assertThat(shown.succeeded()).isEqualTo(3);
		});
	}

	@Test
	void anEndpointWhoseApplicationHasClosedSendsNoProbe() {
		this.upstreams.primary().setDispatcher(answering("Hello"));
		CircuitBreaker[] breaker = new CircuitBreaker[1];
		runner().run((context) -> {
			breaker[0] = endpoint(context, "primary").circuitBreaker();
			breaker[0].transitionToOpenState();
		});
		// Resilience4j's own timer still moves the breaker to half-open after the wait...
		await().atMost(Duration.ofSeconds(5)).until(() -> breaker[0].getState() == State.HALF_OPEN);
		// ...but the closed application's endpoint sends nothing (its connection pool is gone)
		await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2))
			.until(() -> this.upstreams.primary().getRequestCount() == 0);
		assertThat(breaker[0].getState()).isEqualTo(State.HALF_OPEN);
	}

	@Test
	void noProbeIsSentOnceTheApplicationStartsClosingEvenWhileItsBeansTakeTimeToClose() {
		this.upstreams.primary().setDispatcher(answering("Hello"));
		CircuitBreaker[] breaker = new CircuitBreaker[1];
		runner().withUserConfiguration(SlowToClose.class).run((context) -> {
			breaker[0] = endpoint(context, "primary").circuitBreaker();
			breaker[0].transitionToOpenState();
			// closed now: the lifecycle stops (where the web server's graceful shutdown completes),
			// then SlowToClose takes 1 s to be destroyed, before the registry is
		});
		assertThat(breaker[0].getState()).as("half-open while the application was closing").isEqualTo(State.HALF_OPEN);
		assertThat(this.upstreams.primary().getRequestCount()).as("probes sent after the close began").isZero();
	}

	/** A bean destroyed before the endpoint registry (it depends on it), which takes 1 s. */
	@Configuration(proxyBeanMethods = false)
	static class SlowToClose {

		@Bean
		DisposableBean slowToClose(EndpointRegistry endpoints) {
			return () -> Thread.sleep(1000);
		}

	}

	@Test
	void usersCallsGoToTheNextEndpointWhileTheLibraryProbes() {
		Gate probes = new Gate(completion("probe answered"));
		this.upstreams.primary().setDispatcher(probes);
		this.upstreams.backup().setDispatcher(answering("from backup"));
		runner().run((context) -> {
			CircuitBreaker breaker = endpoint(context, "primary").circuitBreaker();
			breaker.transitionToOpenState();
			await().atMost(Duration.ofSeconds(5)).until(() -> this.upstreams.primary().getRequestCount() == 3);
			assertThat(breaker.getState()).isEqualTo(State.HALF_OPEN);
			ChatResponse answer = FakeUpstream.chat(context);
			assertThat(answer.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(answer.content()).isEqualTo("from backup");
			assertThat(answer.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.BREAKER_OPEN,
					Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).as("no user call reached the primary").isEqualTo(3);
			probes.open();
			await().atMost(Duration.ofSeconds(5)).until(() -> breaker.getState() == State.CLOSED);
			assertThat(FakeUpstream.chat(context).tier()).isEqualTo(Tier.PRIMARY);
		});
	}

	@Test
	void failedProbesReopenTheBreakerWhichIsProbedAgainAfterTheWait() {
		this.upstreams.primary().setDispatcher(new Dispatcher() {

			private int calls;

			@Override
			public synchronized MockResponse dispatch(RecordedRequest request) {
				return (++this.calls <= 3) ? Answers.json(503, "{\"error\":{\"message\":\"still down\"}}")
						: completion("Hello");
			}

		});
		runner().withPropertyValues("llm.defaults.retry.max-attempts=1").run((context) -> {
			CircuitBreaker breaker = endpoint(context, "primary").circuitBreaker();
			breaker.transitionToOpenState();
			await().atMost(Duration.ofSeconds(5)).until(() -> breaker.getState() == State.CLOSED);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(6);
			ProbeStats probes = endpoint(context, "primary").probes();
			assertThat(probes.sent()).isEqualTo(6);
			assertThat(probes.failed()).isEqualTo(3);
			assertThat(probes.succeeded()).isEqualTo(3);
			assertThat(context.getBean(BreakerTransitions.class).recent("primary")).extracting(BreakerTransitions.Transition::to)
				.containsExactly(State.OPEN, State.HALF_OPEN, State.OPEN, State.HALF_OPEN, State.CLOSED);
		});
	}

	@Test
	void probesTakeCallVolumeGuardPermitsAndStopWhenItIsSpent() {
		this.upstreams.primary().setDispatcher(answering("Hello"));
		runner().withPropertyValues("llm.gateway.guard.max-calls-per-hour=2").run((context) -> {
			CircuitBreaker breaker = endpoint(context, "primary").circuitBreaker();
			breaker.transitionToOpenState();
			await().atMost(Duration.ofSeconds(5)).until(() -> endpoint(context, "primary").probes().sent() == 2);
			assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
			assertThat(context.getBean(CallVolumeGuard.class).callsThisWindow()).isEqualTo(2);
			// two successes of three permitted probes: the third waits for the guard's next window
			assertThat(breaker.getState()).isEqualTo(State.HALF_OPEN);
		});
	}

	@Test
	void withRequestsAsProbesTheLibrarySendsNone() {
		this.upstreams.primary().setDispatcher(answering("Hello"));
		runner().withPropertyValues("llm.defaults.circuit-breaker.probe=requests").run((context) -> {
			CircuitBreaker breaker = endpoint(context, "primary").circuitBreaker();
			breaker.transitionToOpenState();
			await().during(Duration.ofMillis(900)).atMost(Duration.ofSeconds(3))
				.until(() -> this.upstreams.primary().getRequestCount() == 0);
			assertThat(breaker.getState()).isEqualTo(State.OPEN);
			assertThat(endpoint(context, "primary").probes().mode()).isEqualTo(EndpointSettings.Probe.REQUESTS);
		});
	}


}
