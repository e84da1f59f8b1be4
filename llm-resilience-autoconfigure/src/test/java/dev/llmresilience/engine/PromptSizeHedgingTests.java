package dev.llmresilience.engine;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.FakeUpstream;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;
import reactor.test.scheduler.VirtualTimeScheduler;

import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.answering;
import static dev.llmresilience.support.Answers.completion;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A hedge delay learned per prompt size, over real local HTTP in virtual time: a provider whose
 * first token takes 5 s for a long prompt (its prefill) and 0.2 s for a short one. Once the
 * endpoint has seen both, a short prompt that straggles is hedged after about 0.2 s, not after the
 * 5 s that the endpoint's first-token times over all prompts give, and a long prompt is still left
 * its 5 s.
 */
class PromptSizeHedgingTests {

	private static final Duration VERIFY = Duration.ofSeconds(15);

	private static final Duration LONG_PREFILL = Duration.ofSeconds(5);

	private static final Duration SHORT_PREFILL = Duration.ofMillis(200);

	private static final String LONG_PROMPT = "Summarise this report. " + "x".repeat(8_000);

	private FakeUpstream upstreams;

	private PrefillProvider primary;

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
		this.primary = new PrefillProvider();
		this.upstreams.primary().setDispatcher(this.primary);
		this.upstreams.backup().setDispatcher(answering("from backup"));
	}

	@AfterEach
	void stop() {
		VirtualTimeScheduler.reset();
		this.primary.close();
		this.upstreams.close();
	}

	@Test
	void shortPromptIsHedgedAtItsOwnShortDelayWhileALongOneKeepsItsLongerOne() throws Exception {
		this.upstreams.runner()
			.withPropertyValues("llm.gateway.hedge.enabled=true", "llm.gateway.hedge.delay=1m",
					"llm.gateway.hedge.min-delay=10ms", "llm.gateway.hedge.max-ratio=1")
			.run((context) -> {
				VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
				learn(context, time);
				// a short prompt that straggles: hedged at the short prompts' p95
				LlmGateway gateway = context.getBean(LlmGateway.class);
				StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello again")))
					.expectSubscription()
					.then(() -> this.primary.next().stall())
					.thenAwait(Duration.ofMillis(218))
					.assertNext((answer) -> {
						assertThat(answer.endpoint()).isEqualTo("backup");
						assertThat(answer.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
							.containsExactly(tuple("primary", Outcome.HEDGE_LOST), tuple("backup", Outcome.SUCCESS));
						assertThat(answer.latency()).as("hedged after the short prompts' 0.2 s, not the 5 s of all")
							.isBetween(SHORT_PREFILL, Duration.ofMillis(218));
					})
					.expectComplete()
					.verify(VERIFY);

				HedgeDescriptor report = HedgeDescriptor
					.of(context.getBean(Hedging.class), context.getBean(EndpointRegistry.class))
					.get("default");
				Map<String, HedgePolicy.SizeDelay> sizes = report.bySize().get("primary");
				assertThat(sizes).containsOnlyKeys("<256", "<16K");
				assertThat(sizes.get("<256").samples()).isEqualTo(20);
				assertThat(sizes.get("<256").basis()).isEqualTo("size");
				assertThat(sizes.get("<256").delay()).isBetween(SHORT_PREFILL, Duration.ofMillis(218));
				assertThat(sizes.get("<16K").delay()).isBetween(LONG_PREFILL, Duration.ofMillis(5_450));

				// a long prompt on its normal 5 s prefill: not hedged at the short delay
				int backupCalls = this.upstreams.backup().getRequestCount();
				StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser(LONG_PROMPT)))
					.expectSubscription()
					.then(() -> this.primary.next().answerAfter(time, LONG_PREFILL.minusMillis(1)))
					.assertNext((answer) -> assertThat(answer.tier()).isEqualTo(Tier.PRIMARY))
					.expectComplete()
					.verify(VERIFY);
				assertThat(this.upstreams.backup().getRequestCount()).as("never hedged").isEqualTo(backupCalls);
			});
	}

	@Test
	void perEndpointDelayHedgesAShortPromptOnlyAfterTheLongPromptsTime() throws Exception {
		this.upstreams.runner()
			.withPropertyValues("llm.gateway.hedge.enabled=true", "llm.gateway.hedge.delay=1m",
					"llm.gateway.hedge.min-delay=10ms", "llm.gateway.hedge.max-ratio=1",
					"llm.gateway.hedge.routes.default.by-prompt-size=false")
			.run((context) -> {
				VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();
				learn(context, time);
				assertThat(HedgeDescriptor.of(context.getBean(Hedging.class), context.getBean(EndpointRegistry.class))
					.get("default")
					.bySize()).isNull();
				LlmGateway gateway = context.getBean(LlmGateway.class);
				StepVerifier.withVirtualTime(() -> gateway.chat(ChatRequest.ofUser("hello again")))
					.expectSubscription()
					.then(() -> this.primary.next().stall())
					.expectNoEvent(Duration.ofSeconds(4))
					.then(() -> assertThat(this.upstreams.backup().getRequestCount()).isZero())
					.thenAwait(Duration.ofSeconds(2))
					.assertNext((answer) -> assertThat(answer.latency()).isGreaterThanOrEqualTo(LONG_PREFILL))
					.expectComplete()
					.verify(VERIFY);
			});
	}

	// twenty long prompts, then twenty short ones, each answered after its prefill in virtual time
	private void learn(ApplicationContext context, VirtualTimeScheduler time) throws Exception {
		LlmGateway gateway = context.getBean(LlmGateway.class);
		for (int i = 0; i < 40; i++) {
			ChatRequest request = ChatRequest.ofUser((i < 20) ? LONG_PROMPT : "hello " + i);
			CompletableFuture<ChatResponse> answer = gateway.chat(request).toFuture();
			Held held = this.primary.next();
			held.answerAfter(time, held.prefill());
			assertThat(answer.get(10, TimeUnit.SECONDS).tier()).isEqualTo(Tier.PRIMARY);
		}
		assertThat(this.upstreams.backup().getRequestCount()).as("nothing hedged while learning").isZero();
	}

	private static org.assertj.core.groups.Tuple tuple(Object... values) {
		return org.assertj.core.groups.Tuple.tuple(values);
	}

	/**
	 * A provider whose first token takes longer for a longer prompt: a request of more than 4,000
	 * bytes takes 5 s, a shorter one 0.2 s. The test plays the clock: each request is held until
	 * the test has moved virtual time by its prefill and lets it go.
	 */
	private static final class PrefillProvider extends Dispatcher {

		private final BlockingQueue<Held> arrived = new LinkedBlockingQueue<>();

		private final CountDownLatch closed = new CountDownLatch(1);

		@Override
		public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
			long bytes = (request.getBody() != null) ? request.getBody().size() : 0;
			Held held = new Held((bytes > 4_000) ? LONG_PREFILL : SHORT_PREFILL, new CountDownLatch(1), this.closed);
			this.arrived.add(held);
			held.await();
			return completion("from primary");
		}

		Held next() {
			try {
				Held held = this.arrived.poll(10, TimeUnit.SECONDS);
				assertThat(held).as("a request reached the provider").isNotNull();
				return held;
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}

		@Override
		public void close() {
			this.closed.countDown();
		}

	}

	/** One request the provider holds. */
	private record Held(Duration prefill, CountDownLatch released, CountDownLatch closed) {

		void await() throws InterruptedException {
			while (!this.released.await(10, TimeUnit.MILLISECONDS)) {
				if (this.closed.getCount() == 0) {
					return;
				}
			}
		}

		// its first token after so long in virtual time
		void answerAfter(VirtualTimeScheduler time, Duration after) {
			time.advanceTimeBy(after);
			this.released.countDown();
		}

		// it never answers (until the provider closes)
		void stall() {
		}

	}

}
