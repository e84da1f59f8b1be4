package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.sse;
import static dev.llmresilience.support.Answers.stream;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The hedge budget counts the calls a route walk takes on, and only those: a call the daily budget
 * or {@code llm.gateway.max-concurrent-calls} refused before any endpoint was tried is no share of
 * the budget, whether it was a chat or a stream. Both shapes make the same calls here and leave the
 * same figures in {@code /actuator/llmbreakers}.
 */
class HedgeAccountingTests {

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

	// hedged after a second, at most half of the calls; one call in flight at most; a budget to spend
	private ApplicationContextRunner runner() {
		return this.upstreams.runner()
			.withConfiguration(AutoConfigurations.of(LlmBreakersEndpointAutoConfiguration.class))
			.withPropertyValues("management.endpoints.web.exposure.include=llmbreakers",
					"llm.gateway.hedge.enabled=true", "llm.gateway.hedge.adaptive=false", "llm.gateway.hedge.delay=1s",
					"llm.gateway.hedge.max-ratio=0.5", "llm.gateway.max-concurrent-calls=1",
					"llm.gateway.budget.max-cost-per-day=1");
	}

	@Test
	void chatAndStreamCountTheSameCallsTowardTheHedgeBudget() {
		HedgeDescriptor chat = callsAs(Shape.CHAT);
		HedgeDescriptor stream = callsAs(Shape.STREAM);
		assertThat(stream).isEqualTo(chat);
		assertThat(chat.counts().callsInWindow()).as("only the call that was let in").isOne();
		assertThat(chat.counts().hedgesInWindow()).as("one call in the window: half of it is no hedge").isZero();
		assertThat(chat.counts().refused()).isOne();
		assertThat(chat.counts().hedgeWon()).isZero();
	}

	// One call held by the endpoint tried first, one refused by the limit meanwhile, the hedge delay
	// passing for the held one, and two calls after the daily budget is spent.
	private HedgeDescriptor callsAs(Shape shape) {
		FakeUpstream.Gate held = new FakeUpstream.Gate(shape.answer("held answer"));
		this.upstreams.primary().setDispatcher(held);
		this.upstreams.backup().setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return shape.answer("from backup");
			}
		});
		HedgeDescriptor[] figures = new HedgeDescriptor[1];
		try {
			runner().run((context) -> {
				VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
				LlmGateway gateway = context.getBean(LlmGateway.class);
				int before = this.upstreams.primary().getRequestCount();
				CompletableFuture<Tier> first = shape.call(gateway, "held").toFuture();
				await().atMost(Duration.ofSeconds(10))
					.until(() -> this.upstreams.primary().getRequestCount() == before + 1);

				assertThat(shape.call(gateway, "past the limit").block(Duration.ofSeconds(5))).isEqualTo(Tier.BUSY);
				time.advanceTimeBy(Duration.ofSeconds(1));
				held.open();
				assertThat(first.get(10, TimeUnit.SECONDS)).isNotEqualTo(Tier.BUSY);

				context.getBean(BudgetGuard.class).record(BigDecimal.ONE);
				assertThat(shape.call(gateway, "budget spent").block(Duration.ofSeconds(5))).isEqualTo(Tier.BUSY);
				assertThat(shape.call(gateway, "still spent").block(Duration.ofSeconds(5))).isEqualTo(Tier.BUSY);
				figures[0] = hedging(context);
			});
		}
		finally {
			held.open();
			VirtualTimeScheduler.reset();
		}
		return figures[0];
	}

	private static HedgeDescriptor hedging(ApplicationContext context) {
		return context.getBean(LlmBreakersEndpoint.class).breakers().hedging().get("default");
	}

	/** A call as chat or as a stream, and how its answer's tier shows. */
	private enum Shape {

		CHAT {
			@Override
			MockResponse answer(String content) {
				return completion(content);
			}

			@Override
			Mono<Tier> call(LlmGateway gateway, String prompt) {
				return gateway.chat(ChatRequest.ofUser(prompt)).map(ChatResponse::tier);
			}
		},

		STREAM {
			@Override
			MockResponse answer(String content) {
				return sse(stream(content));
			}

			@Override
			Mono<Tier> call(LlmGateway gateway, String prompt) {
				return gateway.stream(ChatRequest.ofUser(prompt)).collectList().map(Shape::tierOf);
			}
		};

		abstract MockResponse answer(String content);

		abstract Mono<Tier> call(LlmGateway gateway, String prompt);

		private static Tier tierOf(List<ChatChunk> chunks) {
			return chunks.get(chunks.size() - 1).tier();
		}

	}

}
