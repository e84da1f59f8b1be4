package dev.llmresilience.engine;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings.Limits;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.test.scheduler.VirtualTimeScheduler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The time rules of one endpoint call's attempts ({@link AttemptTime}), unit by unit: a retry is
 * refused exactly when what is left of the deadline cannot fit its wait and its own bound (and only
 * a retry that would be made), which failure each bound stands for, and which bounds an attempt gets
 * for each way it is exposed.
 */
class AttemptTimeTests {

	// timeout 10 s, first-token-timeout 2 s, stream-idle-timeout 3 s; retries after 100 ms, 200 ms, ...
	// up to 1 s, with a jitter of a half (the deadline check reserves the longest jittered wait)
	private static final EndpointSettings SETTINGS = EndpointSettings
		.builder("timed", URI.create("http://127.0.0.1:9/v1"), "timed-model")
		.timeouts(new EndpointSettings.Timeouts(Duration.ofSeconds(10), Duration.ofSeconds(1), Duration.ofSeconds(2),
				Duration.ofSeconds(3), true))
		.limits(Limits.DEFAULT.withMaxResponseSize(1 << 20))
		.circuitBreaker(TestEndpoints.DEFAULT_BREAKER)
		.retry(new EndpointSettings.RetrySettings(4, Duration.ofMillis(100), 2.0, Duration.ofSeconds(1), 0.5,
				Duration.ofSeconds(10)))
		.build();

	private static final long NOW = Duration.ofHours(1).toNanos();

	private static final LlmUpstreamException SERVER_ERROR = new LlmUpstreamException("timed", Outcome.SERVER_ERROR, 500,
			null, "Provider error (HTTP 500)", null);

	private final VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();

	private final List<String> signals = new CopyOnWriteArrayList<>();

	@BeforeEach
	void runForAnHour() {
		// bounds are added to a clock that reads more than zero, as a real one does
		advance(Duration.ofHours(1));
	}

	@Test
	void retryIsRefusedExactlyWhenWhatIsLeftCannotFitItsWaitAndTheAttemptTimeout() {
		// the first retry waits at most 150 ms (100 ms and half of it), then has 10 s
		long needed = Duration.ofMillis(10_150).toNanos();
		assertThat(withinDeadline(chat(NOW + needed), SERVER_ERROR, 1, NOW)).isSameAs(SERVER_ERROR);
		assertRefused(withinDeadline(chat(NOW + needed - 1), SERVER_ERROR, 1, NOW));
	}

	@Test
	void reservedWaitGrowsWithEachRetryUpToMaxBackoff() {
		// the third retry waits at most min(400 ms and half, 1 s) = 600 ms
		assertThat(withinDeadline(chat(NOW + Duration.ofMillis(10_600).toNanos()), SERVER_ERROR, 3, NOW))
			.isSameAs(SERVER_ERROR);
		assertRefused(withinDeadline(chat(NOW + Duration.ofMillis(10_600).toNanos() - 1), SERVER_ERROR, 3, NOW));
		// with six attempts, the fourth retry waits at most 800 ms and half, capped at 1 s
		AttemptTime longer = new AttemptTime(withAttempts(6), ChatRequest.ofUser("hello"), EndpointAttempt.Exposure.CHAT,
				context(NOW + Duration.ofSeconds(11).toNanos()), false, new FailureClassifier());
		assertThat(longer.withinDeadline(SERVER_ERROR, 4, NOW)).isSameAs(SERVER_ERROR);
		assertRefused(longer.withinDeadline(SERVER_ERROR, 4, NOW + 1));
	}

	@Test
	void waitTheProviderAskedForIsReservedInsteadOfTheBackoff() {
		LlmUpstreamException rateLimited = new LlmUpstreamException("timed", Outcome.RATE_LIMITED, 429,
				Duration.ofSeconds(3), "Rate limited (HTTP 429)", null);
		long needed = Duration.ofSeconds(13).toNanos();
		assertThat(withinDeadline(chat(NOW + needed), rateLimited, 1, NOW)).isSameAs(rateLimited);
		assertRefused(withinDeadline(chat(NOW + needed - 1), rateLimited, 1, NOW));
	}

	@Test
	void retryAfterOfZeroLeavesTheBackoffReserved() {
		LlmUpstreamException now = new LlmUpstreamException("timed", Outcome.RATE_LIMITED, 429, Duration.ZERO,
				"Rate limited (HTTP 429)", null);
		assertRefused(withinDeadline(chat(NOW + Duration.ofMillis(10_150).toNanos() - 1), now, 1, NOW));
		assertThat(AttemptTime.waitAskedFor(new FailureClassifier(), now)).isNull();
	}

	@Test
	void streamThatStreamsUpstreamReservesItsFirstTokenTimeoutNotTheAttemptTimeout() {
		long needed = Duration.ofMillis(2_150).toNanos();
		AttemptTime streamed = time(EndpointAttempt.Exposure.STREAM, true, NOW + needed);
		assertThat(streamed.withinDeadline(SERVER_ERROR, 1, NOW)).isSameAs(SERVER_ERROR);
		assertRefused(streamed.withinDeadline(SERVER_ERROR, 1, NOW + 1));
		// a chat attempt sent upstream as a stream still needs its whole timeout
		assertRefused(time(EndpointAttempt.Exposure.CHAT, true, NOW + needed).withinDeadline(SERVER_ERROR, 1, NOW));
		// a stream from a client that cannot stream comes whole: its timeout bounds it
		assertRefused(time(EndpointAttempt.Exposure.STREAM, false, NOW + needed).withinDeadline(SERVER_ERROR, 1, NOW));
	}

	@Test
	void onlyARetryThatWouldBeMadeIsRefusedForTheDeadline() {
		AttemptTime time = chat(NOW + 1);
		assertThat(time.withinDeadline(SERVER_ERROR, 4, NOW)).as("the last attempt: no retry to refuse")
			.isSameAs(SERVER_ERROR);
		assertRefused(time.withinDeadline(SERVER_ERROR, 3, NOW));
		LlmUpstreamException invalid = new LlmUpstreamException("timed", Outcome.INVALID_REQUEST, 400, null,
				"Invalid request (HTTP 400)", null);
		assertThat(time.withinDeadline(invalid, 1, NOW)).as("never retried").isSameAs(invalid);
		IllegalStateException unclassified = new IllegalStateException("not the provider's");
		assertThat(time.withinDeadline(unclassified, 1, NOW)).isSameAs(unclassified);
	}

	@Test
	void callWithoutADeadlineIsNeverRefusedARetryWhateverTheClockReads() {
		// the scheduler's clock may read below zero: what is left of no deadline is not computed
		AttemptTime time = chat(Long.MAX_VALUE);
		assertThat(time.withinDeadline(SERVER_ERROR, 1, -Duration.ofHours(1).toNanos())).isSameAs(SERVER_ERROR);
		assertThat(time.withinDeadline(SERVER_ERROR, 1, NOW)).isSameAs(SERVER_ERROR);
	}

	@Test
	void eachExpiryIsTheFailureItsBoundStandsFor() {
		AttemptTime streamed = time(EndpointAttempt.Exposure.STREAM, true, Long.MAX_VALUE);
		assertExpiry(streamed.apply(AttemptWatchdog.Expiry.FIRST_TOKEN), Outcome.TIMEOUT, "first-token-timeout");
		assertExpiry(streamed.apply(AttemptWatchdog.Expiry.IDLE), Outcome.TIMEOUT, "stream-idle-timeout");
		assertExpiry(streamed.apply(AttemptWatchdog.Expiry.ATTEMPT), Outcome.TIMEOUT, "no complete answer within PT10S");
		assertExpiry(streamed.apply(AttemptWatchdog.Expiry.DEADLINE), Outcome.DEADLINE_EXCEEDED, "deadline ran out");
		assertExpiry(streamed.apply(AttemptWatchdog.Expiry.RELEASED), Outcome.RELEASED, "breaker of endpoint 'timed'");
		// without upstream streaming the first token is the whole answer: the attempt's timeout
		AttemptTime whole = time(EndpointAttempt.Exposure.CHAT, false, Long.MAX_VALUE);
		assertExpiry(whole.apply(AttemptWatchdog.Expiry.FIRST_TOKEN), Outcome.TIMEOUT, "no answer within PT10S (timeout)");
	}

	@Test
	void firstTokenTimeoutIsLeftToALaterEndpointWhenOneIsAvailableButAProbeIsItsOwn() {
		LlmUpstreamException later = (LlmUpstreamException) new AttemptTime(SETTINGS, ChatRequest.ofUser("hello"),
				EndpointAttempt.Exposure.CHAT, context(Long.MAX_VALUE, () -> true), true, new FailureClassifier())
			.apply(AttemptWatchdog.Expiry.FIRST_TOKEN);
		assertThat(later.noRetry()).isEqualTo("a later endpoint of the route is available");
		LlmUpstreamException probe = (LlmUpstreamException) new AttemptTime(SETTINGS, ChatRequest.ofUser("hello"),
				EndpointAttempt.Exposure.PROBE, context(Long.MAX_VALUE, () -> true), true, new FailureClassifier())
			.apply(AttemptWatchdog.Expiry.FIRST_TOKEN);
		assertThat(probe.noRetry()).isNull();
		LlmUpstreamException alone = (LlmUpstreamException) time(EndpointAttempt.Exposure.CHAT, true, Long.MAX_VALUE)
			.apply(AttemptWatchdog.Expiry.FIRST_TOKEN);
		assertThat(alone.noRetry()).isNull();
	}

	@Test
	void streamedChatIsBoundByItsFirstTokenTimeoutThenByItsTimeout() {
		watchdog(EndpointAttempt.Exposure.CHAT, true, ChatRequest.ofUser("hello"));
		advance(Duration.ofMillis(1_999));
		assertThat(this.signals).isEmpty();
		advance(Duration.ofMillis(1));
		assertThat(this.signals).containsExactly("first-token-timeout");
		this.signals.clear();
		AttemptWatchdog<String> flowing = watchdog(EndpointAttempt.Exposure.CHAT, true, ChatRequest.ofUser("hello"));
		for (int i = 0; i < 9; i++) {
			advance(Duration.ofSeconds(1));
			flowing.onNext("token");
		}
		advance(Duration.ofMillis(999));
		assertThat(this.signals).isEmpty();
		advance(Duration.ofMillis(1));
		assertThat(this.signals).containsExactly("(timeout)");
	}

	@Test
	void streamIsBoundByItsFirstTokenTimeoutAndIdleTimeButNeverByTheAttemptTimeout() {
		AttemptWatchdog<String> stream = watchdog(EndpointAttempt.Exposure.STREAM, true, ChatRequest.ofUser("hello"));
		for (int i = 0; i < 60; i++) {
			advance(Duration.ofSeconds(1));
			stream.onNext("token");
		}
		assertThat(this.signals).as("a minute of answer, six attempt timeouts").isEmpty();
		advance(Duration.ofSeconds(3));
		assertThat(this.signals).containsExactly("stream-idle-timeout");
	}

	@Test
	void streamFromAClientThatCannotStreamIsBoundByTheAttemptTimeoutUntilItsAnswer() {
		watchdog(EndpointAttempt.Exposure.STREAM, false, ChatRequest.ofUser("hello"));
		advance(Duration.ofMillis(9_999));
		assertThat(this.signals).isEmpty();
		advance(Duration.ofMillis(1));
		assertThat(this.signals).containsExactly("no answer within PT10S (timeout)");
	}

	@Test
	void requestTimeoutReplacesTheEndpointTimeout() {
		ChatRequest request = ChatRequest.builder().user("hello").timeout(Duration.ofSeconds(4)).build();
		watchdog(EndpointAttempt.Exposure.CHAT, false, request);
		advance(Duration.ofMillis(3_999));
		assertThat(this.signals).isEmpty();
		advance(Duration.ofMillis(1));
		assertThat(this.signals).containsExactly("no complete answer within PT4S (timeout)");
	}

	@Test
	void callDeadlineEndsAStreamBeforeItsFirstTokenAndTheRequestDeadlineAfterIt() {
		watchdog(EndpointAttempt.Exposure.STREAM, seconds(1), seconds(5));
		advance(Duration.ofMillis(999));
		assertThat(this.signals).isEmpty();
		advance(Duration.ofMillis(1));
		assertThat(this.signals).containsExactly("deadline ran out");
		this.signals.clear();
		AttemptWatchdog<String> stream = watchdog(EndpointAttempt.Exposure.STREAM, seconds(1), seconds(5));
		advance(Duration.ofMillis(500));
		stream.onNext("token");
		for (int i = 0; i < 4; i++) {
			advance(Duration.ofSeconds(1));
			stream.onNext("token");
		}
		assertThat(this.signals).as("past the call's deadline once tokens flow").isEmpty();
		advance(Duration.ofMillis(500));
		assertThat(this.signals).containsExactly("deadline ran out");
	}

	@Test
	void callDeadlineBoundsAChatAttemptWholeEvenOnceTokensFlow() {
		AttemptWatchdog<String> chat = watchdog(EndpointAttempt.Exposure.CHAT, seconds(3), seconds(5));
		for (int i = 0; i < 2; i++) {
			advance(Duration.ofSeconds(1));
			chat.onNext("token");
		}
		advance(Duration.ofMillis(999));
		assertThat(this.signals).isEmpty();
		advance(Duration.ofMillis(1));
		assertThat(this.signals).containsExactly("deadline ran out");
	}

	private AttemptWatchdog<String> watchdog(EndpointAttempt.Exposure exposure, long deadline, long streamDeadline) {
		CallContext context = new CallContext((attempt, completion) -> {
		}, null, deadline, streamDeadline, CallVolumeGuard.off(), () -> false);
		AttemptWatchdog<String> watchdog = new AttemptTime(SETTINGS, ChatRequest.ofUser("hello"), exposure, context,
				true, new FailureClassifier())
			.watchdog(recording(), this.scheduler, this.scheduler.now(TimeUnit.NANOSECONDS), (chunk) -> true);
		watchdog.onSubscribe(nothing());
		return watchdog;
	}

	private long seconds(long seconds) {
		return this.scheduler.now(TimeUnit.NANOSECONDS) + Duration.ofSeconds(seconds).toNanos();
	}

	private AttemptWatchdog<String> watchdog(EndpointAttempt.Exposure exposure, boolean streaming, ChatRequest request) {
		AttemptWatchdog<String> watchdog = new AttemptTime(SETTINGS, request, exposure, context(Long.MAX_VALUE),
				streaming, new FailureClassifier())
			.watchdog(recording(), this.scheduler, this.scheduler.now(TimeUnit.NANOSECONDS), (chunk) -> true);
		watchdog.onSubscribe(nothing());
		return watchdog;
	}

	private static AttemptTime chat(long deadline) {
		return time(EndpointAttempt.Exposure.CHAT, false, deadline);
	}

	private static AttemptTime time(EndpointAttempt.Exposure exposure, boolean streaming, long deadline) {
		return new AttemptTime(SETTINGS, ChatRequest.ofUser("hello"), exposure, context(deadline), streaming,
				new FailureClassifier());
	}

	private static Throwable withinDeadline(AttemptTime time, Throwable error, int number, long now) {
		return time.withinDeadline(error, number, now);
	}

	private static CallContext context(long deadline) {
		return context(deadline, () -> false);
	}

	private static CallContext context(long deadline, BooleanSupplier later) {
		return new CallContext((attempt, completion) -> {
		}, null, deadline, deadline, CallVolumeGuard.off(), later);
	}

	private static EndpointSettings withAttempts(int maxAttempts) {
		EndpointSettings.RetrySettings retry = SETTINGS.retry();
		return SETTINGS.toBuilder()
			.retry(new EndpointSettings.RetrySettings(maxAttempts, retry.initialBackoff(), retry.multiplier(),
					retry.maxBackoff(), retry.jitter(), retry.maxRetryAfter()))
			.build();
	}

	private static void assertRefused(Throwable error) {
		assertThat(error).isInstanceOfSatisfying(LlmUpstreamException.class,
				(refused) -> assertThat(refused.noRetry()).isEqualTo(AttemptTime.NO_TIME_LEFT));
	}

	private static void assertExpiry(Throwable error, Outcome outcome, String message) {
		assertThat(FailureClassifier.outcomeOf(error)).isEqualTo(outcome);
		assertThat(error).hasMessageContaining(message);
	}

	private void advance(Duration time) {
		this.scheduler.advanceTimeBy(time);
	}

	private static Subscription nothing() {
		return new Subscription() {

			@Override
			public void request(long n) {
			}

			@Override
			public void cancel() {
			}

		};
	}

	private CoreSubscriber<String> recording() {
		List<String> signals = this.signals;
		return new CoreSubscriber<>() {

			@Override
			public void onSubscribe(Subscription subscription) {
				// as the attempt's own subscriber does: a stream's idle bound runs only while chunks are asked for
				subscription.request(Long.MAX_VALUE);
			}

			@Override
			public void onNext(String chunk) {
			}

			@Override
			public void onError(Throwable error) {
				String message = error.getMessage();
				signals.add(List.of("first-token-timeout", "stream-idle-timeout", "deadline ran out",
						"no answer within PT10S (timeout)", "no complete answer within PT4S (timeout)", "(timeout)")
					.stream()
					.filter(message::contains)
					.findFirst()
					.orElse(message));
			}

			@Override
			public void onComplete() {
				signals.add("complete");
			}

		};
	}

}
