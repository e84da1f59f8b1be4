package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.Answers;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.RateLimitedProvider;
import dev.llmresilience.support.Wire;
import io.micrometer.core.instrument.MeterRegistry;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.scheduler.VirtualTimeScheduler;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ApplicationContext;

import static dev.llmresilience.support.Answers.answering;
import static dev.llmresilience.support.FakeUpstream.chat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Capacity known before the 429 (docs/capacity.md), over real local HTTP: fake providers that
 * enforce a request window and announce it in their protocol's documented headers, or answer 429,
 * with the windows on Reactor's virtual time, so that a reset is waited for without sleeping. What
 * the servers received is the measure.
 */
@ExtendWith(OutputCaptureExtension.class)
class CapacityTests {

	private final VirtualTimeScheduler time = VirtualTimeScheduler.getOrSet();

	@AfterEach
	void resetTime() {
		VirtualTimeScheduler.reset();
	}

	private RateLimitedProvider provider(Wire wire, int limit, Duration window) {
		return new RateLimitedProvider(wire, limit, window, () -> this.time.now(TimeUnit.NANOSECONDS),
				Clock.systemUTC());
	}

	@ParameterizedTest
	@EnumSource(value = Wire.class, names = { "OPENAI", "ANTHROPIC", "OPENAI_RESPONSES" })
	void noRequestGoesIntoAWindowTheProviderSaidIsSpentUntilItsReset(Wire wire) {
		try (FakeUpstream upstreams = FakeUpstream.start(wire)) {
			RateLimitedProvider primary = provider(wire, 3, Duration.ofSeconds(10));
			RateLimitedProvider backup = provider(wire, 100, Duration.ofSeconds(10));
			upstreams.primary().setDispatcher(primary);
			upstreams.backup().setDispatcher(backup);
			upstreams.withActuator().withPropertyValues("llm.defaults.retry.max-attempts=1").run((context) -> {
				for (int i = 0; i < 3; i++) {
					assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
				}
				for (int i = 0; i < 3; i++) {
					ChatResponse response = chat(context);
					assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
					assertThat(response.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
						.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED), tuple("backup", Outcome.SUCCESS));
				}
				assertThat(primary.received()).as("requests sent into the spent window").isEqualTo(3);
				assertThat(primary.refused()).as("429s").isZero();
				CapacityDescriptor.Window requests = capacity(context, "primary").requests();
				assertThat(requests).isNotNull();
				assertThat(requests.limit()).isEqualTo(3);
				assertThat(requests.remaining()).isZero();
				assertThat(requests.source()).isEqualTo("LEARNED");
				assertThat(requests.reset()).isNotNull();
				assertThat(capacity(context, "primary").routedAway()).isEqualTo(3);
				assertThat(context.getBean(MeterRegistry.class)
					.get(CapacityMeters.RATE_LIMITED)
					.tag(MeterTags.ENDPOINT, "primary")
					.functionCounter()
					.count()).isEqualTo(3);

				this.time.advanceTimeBy(Duration.ofSeconds(12));
				assertThat(chat(context).tier()).as("after the reset").isEqualTo(Tier.PRIMARY);
				assertThat(primary.received()).isEqualTo(4);
				assertThat(primary.refused()).isZero();
			});
		}
	}

	/**
	 * A learned window whose reset has passed is whole again: taken as such (its limit left, for
	 * another span) until an answer says, so that what depends on it, the batch share among it,
	 * keeps the provider's limit as its basis from a window's first call.
	 */
	@Test
	void aLearnedWindowPastItsResetIsTakenAsWholeAgainUntilAnAnswerSays() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			RateLimitedProvider primary = provider(Wire.OPENAI, 4, Duration.ofSeconds(10));
			upstreams.primary().setDispatcher(primary);
			upstreams.backup().setDispatcher(answering("from backup"));
			upstreams.withActuator().withPropertyValues("llm.defaults.retry.max-attempts=1").run((context) -> {
				for (int i = 0; i < 4; i++) {
					assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
				}
				assertThat(chat(context).tier()).as("the window is spent").isEqualTo(Tier.FALLBACK);

				this.time.advanceTimeBy(Duration.ofSeconds(12));
				CapacityDescriptor.Window requests = capacity(context, "primary").requests();
				assertThat(requests).as("known before any answer of the new window").isNotNull();
				assertThat(requests.limit()).isEqualTo(4);
				assertThat(requests.remaining()).isEqualTo(4);
				assertThat(requests.source()).isEqualTo("LEARNED");
				assertThat(requests.reset()).isAfter(Clock.systemUTC().instant())
					.isBefore(Clock.systemUTC().instant().plusSeconds(11));
				assertThat(capacity(context, "primary").batch().basis()).isEqualTo("RATE_LIMIT");
				assertThat(capacity(context, "primary").batch().limit()).isEqualTo(2);

				for (int i = 0; i < 4; i++) {
					assertThat(chat(context).tier()).as("call " + i + " of the new window").isEqualTo(Tier.PRIMARY);
				}
				ChatResponse fifth = chat(context);
				assertThat(fifth.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
					.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED), tuple("backup", Outcome.SUCCESS));
				assertThat(primary.received()).isEqualTo(8);
				assertThat(primary.refused()).as("429s").isZero();
			});
		}
	}

	/**
	 * The first answer of a window says what was left when its request arrived: the calls sent
	 * after it and still in flight are not counted in it, and must be by the gateway, or each
	 * window ends with as many 429s as calls were in flight when it was first announced (the 429
	 * storm replay: 61 429s in 10 minutes without, 0 with).
	 */
	@Test
	void callsInFlightWhenAWindowIsFirstAnnouncedCountAgainstIt() throws InterruptedException {
		// The scenario needs its first three calls at the provider together. Once, in a full CI run, two
		// fresh connections to the provider's MockWebServer were closed before it read their requests
		// (PrematureCloseException BEFORE response, cause not found); they fell back, and that try proved
		// nothing about the gateway. Such a try is run again, on a fresh context, at most 3 times.
		for (int attempt = 1; !windowAnnouncedWithCallsInFlight(); attempt++) {
			assertThat(attempt).as("tries whose first three calls did not all reach the provider").isLessThan(3);
		}
	}

	/**
	 * @return whether the scenario was set up (its first three calls reached the provider), its
	 * assertions then made
	 */
	private boolean windowAnnouncedWithCallsInFlight() throws InterruptedException {
		AtomicBoolean setUp = new AtomicBoolean();
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			RateLimitedProvider limited = provider(Wire.OPENAI, 5, Duration.ofSeconds(60));
			CountDownLatch arrived = new CountDownLatch(3);
			CountDownLatch release = new CountDownLatch(1);
			CountDownLatch next = new CountDownLatch(4);
			AtomicInteger order = new AtomicInteger();
			upstreams.primary().setDispatcher(new Dispatcher() {
				@Override
				public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
					int arrival = order.incrementAndGet();
					MockResponse response = limited.dispatch(request);
					arrived.countDown();
					if (arrival == 1) {
						// its headers (4 left) are read with the next two requests in flight
						arrived.await(10, TimeUnit.SECONDS);
					}
					else if (arrival <= 3) {
						release.await(10, TimeUnit.SECONDS);
					}
					else {
						// the next calls are all sent before any of them is answered (2 s at most: only
						// 2 of the 4 come when the gateway counts the calls in flight)
						next.countDown();
						next.await(2, TimeUnit.SECONDS);
					}
					return response;
				}
			});
			upstreams.backup().setDispatcher(answering("from backup"));
			upstreams.withActuator().withPropertyValues("llm.defaults.retry.max-attempts=1").run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				List<ChatResponse> first = new CopyOnWriteArrayList<>();
				for (int i = 0; i < 3; i++) {
					gateway.chat(ChatRequest.ofUser("hello")).subscribe(first::add);
				}
				if (!arrived.await(10, TimeUnit.SECONDS)) {
					System.out.println("CapacityTests: " + order.get() + " of the first 3 calls reached the provider, "
							+ first.size() + " answered elsewhere: trying again");
					release.countDown();
					return;
				}
				setUp.set(true);
				await().atMost(Duration.ofSeconds(10)).until(() -> first.size() == 1);
				// 4 left as the first answer said, less the 2 in flight: 2, for 4 calls sent at once
				List<ChatResponse> then = new CopyOnWriteArrayList<>();
				for (int i = 0; i < 4; i++) {
					gateway.chat(ChatRequest.ofUser("hello")).subscribe(then::add);
				}
				await().atMost(Duration.ofSeconds(10)).until(() -> then.size() == 4);
				assertThat(then).filteredOn((answer) -> answer.tier() == Tier.PRIMARY).hasSize(2);
				assertThat(then).filteredOn((answer) -> answer.tier() == Tier.FALLBACK)
					.hasSize(2)
					.allSatisfy((answer) -> assertThat(answer.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
						.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED), tuple("backup", Outcome.SUCCESS)));
				release.countDown();
				await().atMost(Duration.ofSeconds(10)).until(() -> first.size() == 3);
				assertThat(first).extracting(ChatResponse::tier).containsOnly(Tier.PRIMARY);
				assertThat(limited.received()).as("the window's 5 requests").isEqualTo(5);
				assertThat(limited.refused()).as("429s").isZero();
			});
		}
		return setUp.get();
	}

	@Test
	void configuredRequestsPerMinuteAreNotExceeded() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			upstreams.primary().setDispatcher(answering("from primary"));
			upstreams.backup().setDispatcher(answering("from backup"));
			upstreams.withActuator()
				.withPropertyValues("llm.endpoints.primary.rate-limits.requests-per-minute=2",
						"llm.defaults.retry.max-attempts=1")
				.run((context) -> {
					assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
					assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
					ChatResponse third = chat(context);
					assertThat(third.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
						.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED), tuple("backup", Outcome.SUCCESS));
					assertThat(upstreams.primary().getRequestCount()).isEqualTo(2);
					CapacityDescriptor.Window requests = capacity(context, "primary").requests();
					assertThat(requests.limit()).isEqualTo(2);
					assertThat(requests.remaining()).isZero();
					assertThat(requests.source()).isEqualTo("CONFIGURED");
					assertThat(capacity(context, "backup").requests()).as("nothing known").isNull();

					this.time.advanceTimeBy(Duration.ofSeconds(60));
					assertThat(chat(context).tier()).as("the next minute").isEqualTo(Tier.PRIMARY);
					assertThat(upstreams.primary().getRequestCount()).isEqualTo(3);
				});
		}
	}

	@Test
	void configuredTokensPerMinuteCountTheEstimateCorrectedByTheReportedUsage() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			// each answer reports 80 prompt and 10 completion tokens: 90 of the minute's 100
			upstreams.primary().setDispatcher(new Dispatcher() {
				@Override
				public MockResponse dispatch(RecordedRequest request) {
					return Answers.completion("primary-model", "from primary", 80, 10);
				}
			});
			upstreams.backup().setDispatcher(answering("from backup"));
			upstreams.withActuator()
				.withPropertyValues("llm.endpoints.primary.rate-limits.tokens-per-minute=100",
						"llm.defaults.retry.max-attempts=1")
				.run((context) -> {
					// "hello" is 2 tokens by characters / 4, 4 of framing, and 40 asked for: 46 estimated
					ChatRequest request = ChatRequest.builder().user("hello").maxTokens(40).build();
					assertThat(chat(context, request).tier()).isEqualTo(Tier.PRIMARY);
					ChatResponse second = chat(context, request);
					assertThat(second.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
						.as("90 reported + 46 estimated > 100")
						.containsExactly(tuple("primary", Outcome.CAPACITY_EXHAUSTED), tuple("backup", Outcome.SUCCESS));
					assertThat(upstreams.primary().getRequestCount()).isOne();
					assertThat(capacity(context, "primary").tokens().remaining()).isEqualTo(10);
				});
		}
	}

	@Test
	void a429EmptiesTheCapacityUntilItsRetryAfter() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			upstreams.primary().setDispatcher(new Dispatcher() {
				@Override
				public MockResponse dispatch(RecordedRequest request) {
					return Answers.error(429, "rate_limit_exceeded").newBuilder().addHeader("Retry-After", "30").build();
				}
			});
			upstreams.backup().setDispatcher(answering("from backup"));
			upstreams.withActuator().run((context) -> {
				// 30s is over max-retry-after (10s): not retried, and nothing is sent for 30s
				assertThat(chat(context).attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.RATE_LIMITED, Outcome.SUCCESS);
				assertThat(chat(context).attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.CAPACITY_EXHAUSTED, Outcome.SUCCESS);
				assertThat(upstreams.primary().getRequestCount()).isOne();
				this.time.advanceTimeBy(Duration.ofSeconds(29));
				assertThat(chat(context).attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.CAPACITY_EXHAUSTED, Outcome.SUCCESS);
				assertThat(upstreams.primary().getRequestCount()).isOne();
				this.time.advanceTimeBy(Duration.ofSeconds(1));
				assertThat(chat(context).attempts()).extracting(Attempt::outcome).first().isEqualTo(Outcome.RATE_LIMITED);
				assertThat(upstreams.primary().getRequestCount()).isEqualTo(2);
			});
		}
	}

	@Test
	void a429WithoutRetryAfterEmptiesTheCapacityUntilTheResetItsHeadersAnnounce() {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			RateLimitedProvider primary = provider(Wire.OPENAI, 0, Duration.ofSeconds(20));
			upstreams.primary().setDispatcher(primary);
			upstreams.backup().setDispatcher(answering("from backup"));
			upstreams.withActuator().withPropertyValues("llm.defaults.retry.max-attempts=1").run((context) -> {
				assertThat(chat(context).attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.RATE_LIMITED, Outcome.SUCCESS);
				assertThat(chat(context).attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.CAPACITY_EXHAUSTED, Outcome.SUCCESS);
				assertThat(primary.received()).isOne();
				this.time.advanceTimeBy(Duration.ofSeconds(21));
				chat(context);
				assertThat(primary.received()).as("sent again after the reset").isEqualTo(2);
			});
		}
	}

	@Test
	void malformedHeadersAreIgnoredWithOneWarningPerHeader(CapturedOutput output) {
		try (FakeUpstream upstreams = FakeUpstream.start()) {
			upstreams.primary().setDispatcher(new Dispatcher() {
				@Override
				public MockResponse dispatch(RecordedRequest request) {
					return Answers.completion("from primary")
						.newBuilder()
						.addHeader("x-ratelimit-limit-requests", "60")
						.addHeader("x-ratelimit-remaining-requests", "plenty")
						.addHeader("x-ratelimit-reset-requests", "soon")
						.build();
				}
			});
			upstreams.runner().run((context) -> {
				for (int i = 0; i < 3; i++) {
					assertThat(chat(context).tier()).isEqualTo(Tier.PRIMARY);
				}
				assertThat(upstreams.primary().getRequestCount()).isEqualTo(3);
			});
			assertThat(count(output.getOut(), "sent x-ratelimit-remaining-requests: 'plenty'")).isOne();
			assertThat(count(output.getOut(), "sent x-ratelimit-reset-requests: 'soon'")).isOne();
			assertThat(output.getAll()).doesNotContain(FakeUpstream.PRIMARY_KEY);
		}
	}

	private static int count(String text, String part) {
		int count = 0;
		for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
			count++;
		}
		return count;
	}


	private static CapacityDescriptor capacity(ApplicationContext context, String endpoint) {
		return context.getBean(LlmBreakersEndpoint.class).breaker(endpoint).capacity();
	}

}
