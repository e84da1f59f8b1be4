package dev.llmresilience.protocol;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmContextLengthExceededException;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.FakeUpstream.Gate;
import dev.llmresilience.support.Wire;
import mockwebserver3.MockResponse;
import mockwebserver3.QueueDispatcher;
import mockwebserver3.RecordedRequest;
import mockwebserver3.SocketEffect;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import reactor.core.Disposable;
import reactor.test.StepVerifier;

import static dev.llmresilience.support.FakeUpstream.chat;
import static dev.llmresilience.support.FakeUpstream.endpoint;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * docs/failure-rules.md row by row for {@code chat}, once per protocol: {@code primary} and
 * {@code backup} both speak it, over real local HTTP. Each row asserts what the caller gets, how
 * each attempt was classified, how many requests the primary received and what its breaker counted.
 */
class ProtocolChatRulesTests {

	private FakeUpstream upstreams;

	@AfterEach
	void stop() {
		this.upstreams.close();
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void answerIsReturnedAndCountedAsASuccess(Wire wire) {
		start(wire).server("primary").enqueue(wire.answer("Hello there"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(response.content()).isEqualTo("Hello there");
			assertThat(response.finishReason()).isEqualTo("stop");
			assertThat(response.usage()).isNotNull();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.successes(1));
		});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void emptyAnswerIsRetriedCountedThenFallsBack(Wire wire) {
		fallsBackAfterThree(wire, wire.empty(), Outcome.EMPTY_RESPONSE);
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void bodyThatIsNotJsonIsRetriedCountedThenFallsBack(Wire wire) {
		fallsBackAfterThree(wire, wire.malformed(), Outcome.MALFORMED_RESPONSE);
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void contentFilterIsNotRetriedNotCountedAndFallsBack(Wire wire) {
		start(wire).server("primary").enqueue(wire.contentFiltered());
		this.upstreams.server("backup").enqueue(wire.answer("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.CONTENT_FILTERED, Outcome.SUCCESS);
			assertThat(this.upstreams.server("primary").getRequestCount()).isOne();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
		});
	}

	static Stream<Arguments> serverErrors() {
		return Stream.of(Wire.values())
			.flatMap((wire) -> Stream.of(408, 409, 500, 503, 529).map((status) -> Arguments.of(wire, status)));
	}

	@ParameterizedTest(name = "{0} {1}")
	@MethodSource("serverErrors")
	void serverErrorIsRetriedCountedThenFallsBack(Wire wire, int status) {
		fallsBackAfterThree(wire, wire.error(status), Outcome.SERVER_ERROR);
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void rateLimitWithRetryAfterIsWaitedForThenRetried(Wire wire) {
		start(wire).server("primary")
			.enqueue(new MockResponse.Builder(wire.error(429)).setHeader("retry-after", "1").build());
		this.upstreams.server("primary").enqueue(wire.answer("after the wait"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
			assertThat(response.content()).isEqualTo("after the wait");
			assertThat(response.latency()).isGreaterThanOrEqualTo(Duration.ofSeconds(1));
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.RATE_LIMITED, Outcome.SUCCESS);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(new BreakerCalls(2, 1, 1));
		});
	}

	static Stream<Arguments> retryAftersAskingForNoWait() {
		String past = "Wed, 21 Oct 2015 07:28:00 GMT";
		return Stream.of(Arguments.of(Wire.OPENAI, "Retry-After", "-5"), Arguments.of(Wire.OPENAI, "Retry-After", "NaN"),
				Arguments.of(Wire.OPENAI, "Retry-After", "Infinity"), Arguments.of(Wire.OPENAI, "Retry-After", "1e400"),
				Arguments.of(Wire.OPENAI, "Retry-After", past), Arguments.of(Wire.OPENAI, "retry-after-ms", "-1"),
				Arguments.of(Wire.ANTHROPIC, "retry-after", "-5"), Arguments.of(Wire.ANTHROPIC, "retry-after", past),
				Arguments.of(Wire.ANTHROPIC, "retry-after-ms", "NaN"), Arguments.of(Wire.AZURE_OPENAI, "retry-after-ms", "-1"),
				Arguments.of(Wire.AZURE_OPENAI, "x-ms-retry-after-ms", "-1"),
				Arguments.of(Wire.AZURE_OPENAI, "Retry-After", "0"), Arguments.of(Wire.OPENAI_RESPONSES, "retry-after-ms", "-1"),
				Arguments.of(Wire.OPENAI_RESPONSES, "Retry-After", past));
	}

	@ParameterizedTest(name = "{0} {1}: {2}")
	@MethodSource("retryAftersAskingForNoWait")
	void rateLimitWhoseRetryAfterAsksForNoWaitIsRetriedAfterTheBackoff(Wire wire, String header, String value) {
		ArrivalTimes primary = new ArrivalTimes();
		primary.enqueue(wire.answer("warm"));
		primary.enqueue(new MockResponse.Builder(wire.error(429)).setHeader(header, value).build());
		primary.enqueue(wire.answer("after the backoff"));
		start(wire).server("primary").setDispatcher(primary);
		this.upstreams.runner()
			.withPropertyValues("llm.defaults.retry.initial-backoff=500ms", "llm.defaults.retry.max-backoff=500ms",
					"llm.defaults.retry.jitter=0")
			.run((context) -> {
				// a first call loads what the first retry would otherwise wait for, which could pass for a backoff
				assertThat(chat(context).content()).isEqualTo("warm");
				primary.reset();
				ChatResponse response = chat(context);
				assertThat(response.tier()).isEqualTo(Tier.PRIMARY);
				assertThat(response.content()).isEqualTo("after the backoff");
				assertThat(response.attempts()).extracting(Attempt::outcome)
					.containsExactly(Outcome.RATE_LIMITED, Outcome.SUCCESS);
				// The backoff is a least wait, so the lower bound holds on a loaded machine too
				assertThat(primary.gaps()).singleElement()
					.satisfies((gap) -> assertThat(gap).isBetween(Duration.ofMillis(500), Duration.ofSeconds(10)));
			});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void rateLimitAskingForLongerThanMaxRetryAfterFallsBackAtOnce(Wire wire) {
		start(wire).server("primary")
			.enqueue(new MockResponse.Builder(wire.error(429)).setHeader("retry-after", "30").build());
		this.upstreams.server("backup").enqueue(wire.answer("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.latency()).isLessThan(Duration.ofSeconds(5));
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.RATE_LIMITED, Outcome.SUCCESS);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(1));
		});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void connectionClosedBeforeTheAnswerIsRetriedCountedThenFallsBack(Wire wire) {
		MockResponse closed = new MockResponse.Builder(wire.answer("never sent"))
			.onResponseStart(new SocketEffect.CloseSocket())
			.build();
		fallsBackAfterThree(wire, closed, Outcome.CONNECTION_FAILED);
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void noAnswerWithinTheTimeoutIsRetriedCountedThenFallsBack(Wire wire) {
		start(wire).server("primary").setDispatcher(new Gate(wire.answer("too late")));
		this.upstreams.server("backup").enqueue(wire.answer("from backup"));
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.timeout=300ms").run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.TIMEOUT, Outcome.TIMEOUT, Outcome.TIMEOUT, Outcome.SUCCESS);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void invalidRequestReachesTheCallerUnretriedAndUncounted(Wire wire) {
		start(wire).server("primary").enqueue(wire.error(400));
		this.upstreams.runner().run((context) -> {
			StepVerifier.create(context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("hello")))
				.expectErrorSatisfies((error) -> assertThat(error).isExactlyInstanceOf(LlmInvalidRequestException.class)
					.hasMessageContaining("upstream said 400"))
				.verify(Duration.ofSeconds(10));
			assertThat(this.upstreams.server("primary").getRequestCount()).isOne();
			assertThat(this.upstreams.server("backup").getRequestCount()).isZero();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
		});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void promptTooLongReachesTheCallerAsContextLengthExceeded(Wire wire) {
		start(wire).server("primary").enqueue(wire.contextLengthExceeded());
		this.upstreams.runner().run((context) -> {
			StepVerifier.create(context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("a very long prompt")))
				.expectError(LlmContextLengthExceededException.class)
				.verify(Duration.ofSeconds(10));
			assertThat(this.upstreams.server("backup").getRequestCount()).isZero();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
		});
	}

	static Stream<Arguments> configurationErrors() {
		return Stream.of(Wire.values())
			.flatMap((wire) -> Stream.of(401, 403, 404).map((status) -> Arguments.of(wire, status)));
	}

	@ParameterizedTest(name = "{0} {1}")
	@MethodSource("configurationErrors")
	void configurationErrorIsNotRetriedButCountedAndFallsBack(Wire wire, int status) {
		start(wire).server("primary").enqueue(wire.error(status));
		this.upstreams.server("backup").enqueue(wire.answer("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.CONFIGURATION_ERROR, Outcome.SUCCESS);
			assertThat(this.upstreams.server("primary").getRequestCount()).isOne();
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(1));
		});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void callerCancellingRecordsNothingAndReleasesThePermit(Wire wire) {
		Gate gate = new Gate(wire.answer("too late"));
		start(wire).server("primary").setDispatcher(gate);
		this.upstreams.runner().run((context) -> {
			Disposable call = context.getBean(LlmGateway.class).chat(ChatRequest.ofUser("hello")).subscribe();
			assertThat(this.upstreams.server("primary").takeRequest(10, TimeUnit.SECONDS)).isNotNull();
			call.dispose();
			assertThat(endpoint(context, "primary").bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(50);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.NONE);
			gate.open();
		});
	}

	@ParameterizedTest
	@EnumSource(Wire.class)
	void openBreakerOrFullBulkheadMakesNoCallAndFallsBack(Wire wire) throws Exception {
		Gate gate = new Gate(wire.answer("slow answer"));
		start(wire).server("primary").setDispatcher(gate);
		this.upstreams.server("backup").enqueue(wire.answer("bulkhead full"));
		this.upstreams.server("backup").enqueue(wire.answer("breaker open"));
		this.upstreams.runner().withPropertyValues("llm.endpoints.primary.bulkhead.max-concurrent-calls=1").run((context) -> {
			CompletableFuture<ChatResponse> slow = context.getBean(LlmGateway.class)
				.chat(ChatRequest.ofUser("slow"))
				.toFuture();
			assertThat(this.upstreams.server("primary").takeRequest(10, TimeUnit.SECONDS)).isNotNull();
			ChatResponse rejected = chat(context);
			assertThat(rejected.content()).isEqualTo("bulkhead full");
			assertThat(rejected.attempts()).extracting(Attempt::outcome)
				.containsExactly(Outcome.BULKHEAD_FULL, Outcome.SUCCESS);
			gate.open();
			assertThat(slow.get(10, TimeUnit.SECONDS).content()).isEqualTo("slow answer");
			endpoint(context, "primary").circuitBreaker().transitionToOpenState();
			ChatResponse open = chat(context);
			assertThat(open.content()).isEqualTo("breaker open");
			assertThat(open.attempts()).extracting(Attempt::outcome).containsExactly(Outcome.BREAKER_OPEN, Outcome.SUCCESS);
			assertThat(this.upstreams.server("primary").getRequestCount()).isOne();
		});
	}

	/**
	 * Answers in the order enqueued, and notes when each request arrived: the wait between two
	 * attempts as the provider sees it.
	 */
	private static final class ArrivalTimes extends QueueDispatcher {

		private final List<Long> nanos = new CopyOnWriteArrayList<>();

		@Override
		public MockResponse dispatch(RecordedRequest request) throws InterruptedException {
			this.nanos.add(System.nanoTime());
			return super.dispatch(request);
		}

		void reset() {
			this.nanos.clear();
		}

		List<Duration> gaps() {
			List<Duration> gaps = new ArrayList<>();
			for (int i = 1; i < this.nanos.size(); i++) {
				gaps.add(Duration.ofNanos(this.nanos.get(i) - this.nanos.get(i - 1)));
			}
			return gaps;
		}

	}

	private FakeUpstream start(Wire wire) {
		this.upstreams = FakeUpstream.start(wire);
		return this.upstreams;
	}

	private void fallsBackAfterThree(Wire wire, MockResponse failure, Outcome outcome) {
		start(wire);
		for (int i = 0; i < 3; i++) {
			this.upstreams.server("primary").enqueue(failure);
		}
		this.upstreams.server("backup").enqueue(wire.answer("from backup"));
		this.upstreams.runner().run((context) -> {
			ChatResponse response = FakeUpstream.chat(context);
			assertThat(response.tier()).isEqualTo(Tier.FALLBACK);
			assertThat(response.endpoint()).isEqualTo("backup");
			assertThat(response.content()).isEqualTo("from backup");
			assertThat(response.attempts()).extracting(Attempt::outcome)
				.containsExactly(outcome, outcome, outcome, Outcome.SUCCESS);
			assertThat(this.upstreams.server("primary").getRequestCount()).isEqualTo(3);
			assertThat(BreakerCalls.of(context, "primary")).isEqualTo(BreakerCalls.failures(3));
		});
	}

}
