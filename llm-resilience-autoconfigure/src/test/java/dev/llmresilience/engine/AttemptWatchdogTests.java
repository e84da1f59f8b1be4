package dev.llmresilience.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.test.scheduler.VirtualTimeScheduler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AttemptWatchdog}'s edge: an attempt released (its breaker opened) after it was registered
 * as waiting but before its upstream call had subscribed. The upstream call must still be cancelled
 * once it subscribes, and the subscriber must see its subscription before the error: found by the
 * concurrency hammer as an upstream call left in flight for good.
 */
class AttemptWatchdogTests {

	@Test
	void releasedBeforeTheUpstreamSubscribedCancelsItWhenItDoesAndSignalsInOrder() {
		VirtualTimeScheduler scheduler = VirtualTimeScheduler.create();
		List<String> signals = new CopyOnWriteArrayList<>();
		AttemptWatchdog<String> watchdog = new AttemptWatchdog<>(recording(signals), scheduler,
				AttemptWatchdog.Bounds.NONE, (chunk) -> true,
				(expiry) -> new IllegalStateException(expiry.name()));
		assertThat(watchdog.release()).isTrue();
		assertThat(signals).as("nothing before the subscription").isEmpty();
		AtomicBoolean cancelled = new AtomicBoolean();
		watchdog.onSubscribe(new Subscription() {

			@Override
			public void request(long n) {
			}

			@Override
			public void cancel() {
				cancelled.set(true);
			}

		});
		assertThat(cancelled).as("the upstream call, once subscribed, is stopped").isTrue();
		assertThat(signals).containsExactly("subscribed", "error RELEASED");
		watchdog.onNext("late");
		watchdog.onComplete();
		assertThat(signals).as("what the upstream sends after is dropped").hasSize(2);
	}

	private static CoreSubscriber<String> recording(List<String> signals) {
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
