package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.FakeUpstream.Gate;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.FakeUpstream.chat;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/failure-rules.md, the rows where no upstream answer decides: the caller cancels, the breaker
 * is open, the bulkhead is full. Slow calls are held at a {@link Gate} rather than slept on.
 */
class PermitRulesTests {

	private FakeUpstream upstreams;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@Test
	void callerCancellingRecordsNothingAndReleasesEveryPermit() {
		Gate gate = new Gate(completion("too late"));
		this.upstreams.primary().setDispatcher(gate);
		this.upstreams.runner().run((context) -> {
			LlmEndpoint primary = endpoint(context, "primary");
			Disposable call = context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("hello")).subscribe();
			assertThat(this.upstreams.primary().takeRequest(10, TimeUnit.SECONDS)).isNotNull();
			assertThat(primary.bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(49);
			call.dispose();
			assertThat(primary.bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(50);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
			assertThat(primary.circuitBreaker().getMetrics().getNumberOfNotPermittedCalls()).isZero();
			assertThat(primary.retry().getMetrics().getNumberOfFailedCallsWithRetryAttempt()
					+ primary.retry().getMetrics().getNumberOfFailedCallsWithoutRetryAttempt())
				.isZero();
			gate.open();
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
		});
	}

	@Test
	void cancelledHalfOpenProbeGivesItsPermitBack() {
		Gate gate = new Gate(completion("probe answered"));
		this.upstreams.primary().setDispatcher(gate);
		this.upstreams.runner()
			.withPropertyValues("llm.endpoints.primary.circuit-breaker.permitted-calls-in-half-open-state=1",
					"llm.endpoints.primary.circuit-breaker.probe=requests")
			.run((context) -> {
				CircuitBreaker breaker = endpoint(context, "primary").circuitBreaker();
				breaker.transitionToOpenState();
				breaker.transitionToHalfOpenState();
				Disposable probe = context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("probe")).subscribe();
				assertThat(this.upstreams.primary().takeRequest(10, TimeUnit.SECONDS)).isNotNull();
				probe.dispose();
				gate.open();
				ChatResponse response = chat(context);
				assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
				assertThat(response.content()).isEqualTo("probe answered");
				assertThat(this.upstreams.primary().getRequestCount()).isEqualTo(2);
				assertThat(breaker.getMetrics().getNumberOfNotPermittedCalls()).isZero();
				assertThat(breaker.getState()).isEqualTo(CircuitBreaker.State.CLOSED);
			});
	}

	@Test
	void openBreakerMakesNoCallAndFallsBack() {
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().run((context) -> {
			CircuitBreaker breaker = endpoint(context, "primary").circuitBreaker();
			breaker.transitionToOpenState();
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.BREAKER_OPEN, Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isZero();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
			assertThat(breaker.getMetrics().getNumberOfNotPermittedCalls()).isOne();
		});
	}

	@Test
	void everyBreakerOpenAnswersBusyFastWithoutCallingUpstream() {
		this.upstreams.runner().withPropertyValues("llm.gateway.busy-message=Busy now, try again soon.").run((context) -> {
			endpoint(context, "primary").circuitBreaker().transitionToOpenState();
			endpoint(context, "backup").circuitBreaker().transitionToOpenState();
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.BUSY);
			assertThat(response.isDegraded()).isTrue();
			assertThat(response.content()).isEqualTo("Busy now, try again soon.");
			assertThat(response.endpoint()).isNull();
			assertThat(response.latency()).isLessThan(Duration.ofSeconds(1));
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.BREAKER_OPEN, Outcome.BREAKER_OPEN);
			assertThat(response.attempts()).extracting(Attempt::endpoint).containsExactly("primary", "backup");
			assertThat(this.upstreams.primary().getRequestCount()).isZero();
			assertThat(this.upstreams.backup().getRequestCount()).isZero();
		});
	}

	@Test
	void fullBulkheadMakesNoCallIsNotCountedAndFallsBack() throws Exception {
		Gate gate = new Gate(completion("slow answer"));
		this.upstreams.primary().setDispatcher(gate);
		this.upstreams.backup().enqueue(completion("from backup"));
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.bulkhead.max-concurrent-calls=1").run((context) -> {
			LlmEndpoint primary = endpoint(context, "primary");
			CompletableFuture<ChatResponse> slow = context.getBean(LlmGateway.class)
				.chat(ChatRequest.ofUser("slow"))
				.toFuture();
			assertThat(this.upstreams.primary().takeRequest(10, TimeUnit.SECONDS)).isNotNull();
			assertThat(primary.bulkhead().getMetrics().getAvailableConcurrentCalls()).isZero();

			ChatResponse rejected = chat(context);
			assertThat(rejected.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(rejected.content()).isEqualTo("from backup");
			assertThat(rejected.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.BULKHEAD_FULL, Outcome.SUCCESS);
			assertThat(this.upstreams.primary().getRequestCount()).isOne();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);

			gate.open();
			ChatResponse first = slow.get(10, TimeUnit.SECONDS);
			assertThat(first.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(first.content()).isEqualTo("slow answer");
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
			assertThat(primary.bulkhead().getMetrics().getAvailableConcurrentCalls()).isOne();
		});
	}

}
