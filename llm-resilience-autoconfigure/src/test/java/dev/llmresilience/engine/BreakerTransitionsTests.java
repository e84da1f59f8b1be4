package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.support.FakeUpstream;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.error;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The breaker-transition log an operator reads, and the history the actuator shows: an opening at
 * WARN with the rate and window that tripped it, recovery steps at INFO with what they mean, and
 * changes made by hand at INFO.
 */
@ExtendWith(OutputCaptureExtension.class)
class BreakerTransitionsTests {

	private FakeUpstream upstreams;

	private ApplicationContextRunner contextRunner;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
		this.contextRunner = this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.retry.max-attempts=1",
					"llm.endpoints.primary.circuit-breaker.sliding-window-size=4",
					"llm.endpoints.primary.circuit-breaker.permitted-calls-in-half-open-state=2",
					"llm.endpoints.primary.circuit-breaker.wait-duration-in-open-state=15s",
					// users' calls are the probes here, so that the test moves the breaker itself
					"llm.endpoints.primary.circuit-breaker.probe=requests");
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void openingIsAWarningWithTheRateAndWindowAndRecoveryIsInfoWithWhatItMeans(CapturedOutput output) {
		this.contextRunner.run((context) -> {
			LlmEndpoint primary = FakeUpstream.endpoint(context, "primary");
			calls(primary, 4, 500);
			assertThat(primary.circuitBreaker().getState()).isEqualTo(State.OPEN);
			primary.circuitBreaker().transitionToHalfOpenState();
			for (int i = 0; i < 2; i++) {
				this.upstreams.primary().enqueue(completion("fine"));
				call(primary);
			}
			assertThat(primary.circuitBreaker().getState()).isEqualTo(State.CLOSED);
			assertThat(transitionLines(output, "WARN")).singleElement()
				.isEqualTo("LLM endpoint 'primary' (model primary-model): circuit breaker CLOSED -> OPEN: failure rate "
						+ "100.0 % over the 4 calls in its window of 4 (threshold 50.0 %); calls go to the next endpoint "
						+ "of their route, probes after 15s");
			assertThat(transitionLines(output, "INFO")).containsExactly(
					"LLM endpoint 'primary' (model primary-model): circuit breaker OPEN -> HALF_OPEN: 15s passed, 2 probe "
							+ "calls let through",
					"LLM endpoint 'primary' (model primary-model): circuit breaker HALF_OPEN -> CLOSED: the 2 probe calls "
							+ "stayed under the failure-rate threshold of 50.0 %; a new window of 4 calls starts");
			assertThat(history(context)).extracting((transition) -> transition.from() + "->" + transition.to() + " "
					+ transition.failureRate())
				.containsExactly("CLOSED->OPEN 100.0", "OPEN->HALF_OPEN -1.0", "HALF_OPEN->CLOSED -1.0");
		});
		assertThat(output.getAll()).doesNotContain("not yet computed").doesNotContain("over the last 0");
	}

	@Test
	void failedProbesReopenAtWarnWithTheProbesRate(CapturedOutput output) {
		this.contextRunner.run((context) -> {
			LlmEndpoint primary = FakeUpstream.endpoint(context, "primary");
			calls(primary, 4, 503);
			primary.circuitBreaker().transitionToHalfOpenState();
			calls(primary, 2, 503);
			assertThat(primary.circuitBreaker().getState()).isEqualTo(State.OPEN);
			assertThat(transitionLines(output, "WARN")).hasSize(2)
				.last()
				.isEqualTo("LLM endpoint 'primary' (model primary-model): circuit breaker HALF_OPEN -> OPEN: failure rate "
						+ "100.0 % over the 2 probe calls (threshold 50.0 %); calls go to the next endpoint of their route, "
						+ "probes after 15s");
		});
	}

	@Test
	void changesMadeByHandAreInfoNotWarnings(CapturedOutput output) {
		this.contextRunner.run((context) -> {
			CircuitBreaker breaker = FakeUpstream.endpoint(context, "primary").circuitBreaker();
			breaker.transitionToForcedOpenState();
			breaker.transitionToClosedState();
			breaker.transitionToDisabledState();
			breaker.reset();
			assertThat(transitionLines(output, "WARN")).isEmpty();
			assertThat(transitionLines(output, "INFO")).hasSize(4)
				.allSatisfy((line) -> assertThat(line).endsWith(
						": set by hand (the actuator's POST /actuator/llmbreakers/{name}, or code)"))
				.first()
				.asString()
				.contains("CLOSED -> FORCED_OPEN");
		});
	}

	@Test
	void keepsTheLastTenTransitionsOfEachEndpoint() {
		this.contextRunner.run((context) -> {
			CircuitBreaker breaker = FakeUpstream.endpoint(context, "primary").circuitBreaker();
			for (int i = 0; i < 6; i++) {
				breaker.transitionToForcedOpenState();
				breaker.transitionToClosedState();
			}
			BreakerTransitions transitions = context.getBean(BreakerTransitions.class);
			assertThat(transitions.recent("primary")).hasSize(BreakerTransitions.MAX_TRANSITIONS);
			assertThat(transitions.last("primary").to()).isEqualTo(State.CLOSED);
			assertThat(transitions.recent("backup")).isEmpty();
			assertThat(transitions.last("backup")).isNull();
			assertThat(transitions.recent("unknown")).isEmpty();
		});
	}

	@Test
	void aTransitionWhoseEventArrivesAfterTheNextOnesIsShownInItsPlace() {
		this.contextRunner.run((context) -> {
			CircuitBreaker breaker = FakeUpstream.endpoint(context, "primary").circuitBreaker();
			breaker.transitionToOpenState();
			// as when the probes close the breaker on another thread before the half-open event has
			// reached every listener: the generic listeners come first, and this one closes it meanwhile
			breaker.getEventPublisher().onEvent((event) -> {
				if (event instanceof io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent moved
						&& moved.getStateTransition().getToState() == State.HALF_OPEN) {
					Thread closer = new Thread(breaker::transitionToClosedState);
					closer.start();
					try {
						closer.join(5000);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
					}
				}
			});
			breaker.transitionToHalfOpenState();
			assertThat(breaker.getState()).isEqualTo(State.CLOSED);
			assertThat(history(context)).extracting((transition) -> transition.from() + "->" + transition.to())
				.containsExactly("CLOSED->OPEN", "OPEN->HALF_OPEN", "HALF_OPEN->CLOSED");
		});
	}

	private void calls(LlmEndpoint endpoint, int count, int status) {
		for (int i = 0; i < count; i++) {
			this.upstreams.primary().enqueue(error(status, "server_error"));
			call(endpoint);
		}
	}

	private static void call(LlmEndpoint endpoint) {
		endpoint.chat(ChatRequest.ofUser("hello"), (attempt) -> {
		}).onErrorResume((ex) -> Mono.empty()).block(Duration.ofSeconds(10));
	}

	private static List<BreakerTransitions.Transition> history(ApplicationContext context) {
		return context.getBean(BreakerTransitions.class).recent("primary");
	}

	private static List<String> transitionLines(CapturedOutput output, String level) {
		return output.getAll()
			.lines()
			// this application's endpoints only: a breaker of another test's application may move meanwhile
			.filter((line) -> line.contains(" " + level + " ") && line.contains("LLM endpoint 'primary'")
					&& line.contains("circuit breaker"))
			.map((line) -> line.substring(line.indexOf("LLM endpoint")))
			.toList();
	}

}
