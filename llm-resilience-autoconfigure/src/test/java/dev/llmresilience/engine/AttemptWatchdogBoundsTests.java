package dev.llmresilience.engine;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.test.scheduler.VirtualTimeScheduler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which of an attempt's bounds ends it, and when, in virtual time: each bound fires at exactly its
 * time, the earliest one wins and names the failure, a chunk that is no token does not end the wait
 * for the first one, and once tokens flow only the idle time, the attempt's timeout and the deadline
 * after the first token count.
 */
class AttemptWatchdogBoundsTests {

	private static final long NONE = Long.MAX_VALUE;

	private final VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();

	private final List<String> signals = new CopyOnWriteArrayList<>();

	private final AtomicBoolean upstreamCancelled = new AtomicBoolean();

	@Test
	void firstTokenTimeoutEndsTheAttemptAtExactlyItsBound() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), NONE, NONE, NONE, NONE);
		advance(99);
		assertThat(this.signals).containsExactly("subscribed");
		advance(1);
		assertThat(this.signals).containsExactly("subscribed", "error FIRST_TOKEN");
		assertThat(this.upstreamCancelled).as("the upstream call is stopped").isTrue();
		watchdog.onNext("late");
		assertThat(this.signals).as("nothing after the expiry").hasSize(2);
	}

	@Test
	void attemptTimeoutEarlierThanTheFirstTokenTimeoutEndsTheAttemptAsAnAttemptTimeout() {
		subscribed(millis(300), NONE, millis(200), NONE, NONE);
		advance(199);
		assertThat(this.signals).containsExactly("subscribed");
		advance(1);
		assertThat(this.signals).containsExactly("subscribed", "error ATTEMPT");
	}

	@Test
	void firstTokenTimeoutEqualToTheAttemptTimeoutIsAFirstTokenTimeout() {
		subscribed(millis(200), NONE, millis(200), NONE, NONE);
		advance(200);
		assertThat(this.signals).containsExactly("subscribed", "error FIRST_TOKEN");
	}

	@Test
	void deadlineEarlierThanTheAttemptsOwnBoundsEndsItAsTheDeadlineAtExactlyItsTime() {
		subscribed(millis(300), NONE, millis(400), millis(150), NONE);
		advance(149);
		assertThat(this.signals).containsExactly("subscribed");
		advance(1);
		assertThat(this.signals).containsExactly("subscribed", "error DEADLINE");
	}

	@Test
	void deadlineEqualToTheFirstTokenTimeoutIsTheFirstTokenTimeout() {
		subscribed(millis(150), NONE, NONE, millis(150), NONE);
		advance(150);
		assertThat(this.signals).containsExactly("subscribed", "error FIRST_TOKEN");
	}

	@Test
	void chunkThatCarriesNoTokenDoesNotEndTheWaitForTheFirstOne() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), millis(1000), NONE, NONE, NONE);
		advance(50);
		watchdog.onNext("role");
		advance(50);
		assertThat(this.signals).containsExactly("subscribed", "next role", "error FIRST_TOKEN");
	}

	@Test
	void onceTokensFlowTheStreamEndsAfterItsIdleTimeWithoutAChunk() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), millis(200), NONE, NONE, NONE);
		advance(50);
		watchdog.onNext("token a");
		advance(150);
		watchdog.onNext("token b");
		advance(199);
		assertThat(this.signals).as("each chunk starts the idle time again, and the first-token bound is past")
			.containsExactly("subscribed", "next token a", "next token b");
		advance(1);
		assertThat(this.signals).endsWith("error IDLE");
	}

	@Test
	void onceTokensFlowTheAttemptTimeoutStillBoundsTheWholeAnswer() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), millis(200), millis(300), NONE, NONE);
		for (int i = 0; i < 5; i++) {
			advance(50);
			watchdog.onNext("token " + i);
		}
		assertThat(this.signals).doesNotContain("error ATTEMPT");
		advance(50);
		assertThat(this.signals).endsWith("next token 4", "error ATTEMPT");
	}

	@Test
	void idleTimeEqualToWhatIsLeftOfTheAttemptTimeoutIsAnIdleTimeout() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), millis(200), millis(250), NONE, NONE);
		advance(50);
		watchdog.onNext("token");
		advance(200);
		assertThat(this.signals).endsWith("error IDLE");
	}

	@Test
	void onceTokensFlowTheDeadlineAfterTheFirstTokenBoundsTheStream() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), millis(200), NONE, millis(100), millis(260));
		advance(50);
		watchdog.onNext("token");
		advance(150);
		assertThat(this.signals).as("the deadline before the first token no longer counts")
			.containsExactly("subscribed", "next token");
		watchdog.onNext("token");
		advance(59);
		assertThat(this.signals).doesNotContain("error DEADLINE");
		advance(1);
		assertThat(this.signals).endsWith("error DEADLINE");
	}

	@Test
	void deadlineAfterTheFirstTokenEqualToTheIdleBoundIsAnIdleTimeout() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), millis(200), NONE, NONE, millis(250));
		advance(50);
		watchdog.onNext("token");
		advance(200);
		assertThat(this.signals).endsWith("error IDLE");
	}

	@Test
	void attemptCancelledBeforeItsUpstreamSubscribedCancelsItWhenItDoes() {
		AttemptWatchdog<String> watchdog = new AttemptWatchdog<>(recording(), this.scheduler,
				new AttemptWatchdog.Bounds(millis(100), NONE, NONE, NONE, NONE), (chunk) -> true,
				(expiry) -> new IllegalStateException(expiry.name()));
		watchdog.cancel();
		watchdog.onSubscribe(new Subscription() {

			@Override
			public void request(long n) {
			}

			@Override
			public void cancel() {
				AttemptWatchdogBoundsTests.this.upstreamCancelled.set(true);
			}

		});
		assertThat(this.upstreamCancelled).isTrue();
		advance(200);
		assertThat(this.signals).as("nothing expires a cancelled attempt").containsExactly("subscribed");
	}

	@Test
	void attemptWithNoBoundsIsNeverEndedByTheWatchdog() {
		AttemptWatchdog<String> watchdog = subscribed(NONE, NONE, NONE, NONE, NONE);
		watchdog.onNext("token");
		this.scheduler.advanceTimeBy(Duration.ofDays(365));
		watchdog.onComplete();
		assertThat(this.signals).containsExactly("subscribed", "next token", "complete");
	}

	@Test
	void releaseEndsOnlyAnAttemptStillWaitingForItsFirstToken() {
		AttemptWatchdog<String> waiting = subscribed(NONE, NONE, NONE, NONE, NONE);
		assertThat(waiting.release()).isTrue();
		assertThat(this.signals).containsExactly("subscribed", "error RELEASED");
		assertThat(this.upstreamCancelled).isTrue();
		this.signals.clear();
		AttemptWatchdog<String> flowing = subscribed(NONE, NONE, NONE, NONE, NONE);
		flowing.onNext("token");
		assertThat(flowing.release()).as("tokens flow: the attempt goes on").isFalse();
		flowing.onComplete();
		assertThat(flowing.release()).as("ended: nothing to release").isFalse();
		assertThat(this.signals).containsExactly("subscribed", "next token", "complete");
	}

	@Test
	void endedAttemptStopsItsTimer() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), NONE, NONE, NONE, NONE);
		watchdog.onError(new IllegalStateException("upstream"));
		advance(200);
		assertThat(this.signals).containsExactly("subscribed", "error upstream");
		assertThat(this.upstreamCancelled).as("an upstream that ended is not cancelled").isFalse();
	}

	@Test
	void cancelledAttemptIsNotExpiredLater() {
		AttemptWatchdog<String> watchdog = subscribed(millis(100), NONE, NONE, NONE, NONE);
		watchdog.cancel();
		assertThat(this.upstreamCancelled).isTrue();
		advance(200);
		assertThat(this.signals).containsExactly("subscribed");
	}

	private AttemptWatchdog<String> subscribed(long firstTokenBy, long idleNanos, long attemptBy,
			long deadlineBeforeToken, long deadlineAfterToken) {
		this.upstreamCancelled.set(false);
		AttemptWatchdog<String> watchdog = new AttemptWatchdog<>(recording(), this.scheduler,
				new AttemptWatchdog.Bounds(firstTokenBy, idleNanos, attemptBy, deadlineBeforeToken, deadlineAfterToken),
				(chunk) -> chunk.startsWith("token"),
				(expiry) -> new IllegalStateException(expiry.name()));
		watchdog.onSubscribe(new Subscription() {

			@Override
			public void request(long n) {
			}

			@Override
			public void cancel() {
				AttemptWatchdogBoundsTests.this.upstreamCancelled.set(true);
			}

		});
		return watchdog;
	}

	private long millis(long millis) {
		return this.scheduler.now(java.util.concurrent.TimeUnit.NANOSECONDS) + Duration.ofMillis(millis).toNanos();
	}

	private void advance(long millis) {
		this.scheduler.advanceTimeBy(Duration.ofMillis(millis));
	}

	private CoreSubscriber<String> recording() {
		List<String> signals = this.signals;
		return new CoreSubscriber<>() {

			@Override
			public void onSubscribe(Subscription subscription) {
				signals.add("subscribed");
				subscription.request(Long.MAX_VALUE);
			}

			@Override
			public void onNext(String chunk) {
				signals.add("next " + chunk);
			}

			@Override
			public void onError(Throwable error) {
				signals.add("error " + error.getMessage());
			}

			@Override
			public void onComplete() {
				signals.add("complete");
			}

		};
	}

}
