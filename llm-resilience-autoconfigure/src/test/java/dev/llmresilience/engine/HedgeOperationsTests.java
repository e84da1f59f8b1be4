package dev.llmresilience.engine;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.engine.LlmBreakersEndpoint.BreakersDescriptor;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import io.micrometer.core.instrument.MeterRegistry;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What an operator sees of hedged requests: {@code llm.gateway.hedges} by route, the
 * two endpoints and the outcome; the loser's attempt in {@code gen_ai.client.operation.duration}
 * as {@code HEDGE_LOST}; and each hedging route's budget and counts, and each endpoint's
 * first-token times, in {@code /actuator/llmbreakers}.
 */
class HedgeOperationsTests {

	private final FakeUpstream upstreams;

	private final ApplicationContextRunner contextRunner;

	HedgeOperationsTests() throws Exception {
		this.upstreams = FakeUpstream.priced();
		this.contextRunner = this.upstreams.withActuator()
			.withPropertyValues("llm.gateway.hedge.enabled=true", "llm.gateway.hedge.adaptive=false",
					"llm.gateway.hedge.delay=1s", "llm.gateway.hedge.max-ratio=1");
	}

	@AfterEach
	void stop() {
		VirtualTimeScheduler.reset();
		this.upstreams.close();
	}

	@Test
	void hedgeShowsInMetersAndInTheActuator() {
		CountDownLatch release = new CountDownLatch(1);
		this.upstreams.primary().setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
				release.await(20, TimeUnit.SECONDS);
				return Answers.completion("gpt-test", "too late", 1, 1);
			}
		});
		this.upstreams.backup().enqueue(Answers.completion("small-test", "from backup", 3, 2));
		this.contextRunner.run((context) -> {
			LlmGateway gateway = context.getBean(LlmGateway.class);
			StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello")))
				.expectSubscription()
				.thenAwait(Duration.ofSeconds(1))
				.assertNext((ChatResponse answer) -> assertThat(answer.endpoint()).isEqualTo("backup"))
				.expectComplete()
				.verify(Duration.ofSeconds(15));
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			assertThat(meters.get("llm.gateway.hedges")
				.tags("llm.route", "default", "llm.from", "primary", "llm.to", "backup", "llm.outcome", "HEDGE_WON")
				.counter()
				.count()).isEqualTo(1);
			assertThat(meters.get("gen_ai.client.operation.duration")
				.tags("llm.endpoint", "primary", "error.type", "HEDGE_LOST")
				.timer()
				.count()).isEqualTo(1);
			BreakersDescriptor breakers = context.getBean(LlmBreakersEndpoint.class).breakers();
			HedgeDescriptor hedging = breakers.hedging().get("default");
			assertThat(hedging.delay()).isEqualTo("fixed");
			assertThat(hedging.policy().fixedDelay()).isEqualTo(Duration.ofSeconds(1));
			assertThat(hedging.policy().maxRatio()).isEqualTo(1.0);
			assertThat(hedging.counts().hedgeWon()).isOne();
			assertThat(hedging.counts().firstWon()).isZero();
			assertThat(breakers.endpoints().get("primary").breaker().slowCalls()).as("the loser's slow call").isOne();
			assertThat(breakers.endpoints().get("primary").breaker().failedCalls()).isZero();
			assertThat(breakers.endpoints().get("backup").firstToken().samples()).isOne();
			release.countDown();
		});
	}

}
