package dev.llmresilience.endpoint;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link CircuitBreakerPermit} records an outcome before it travels on, and nothing once the caller
 * has gone; what arrives then is dropped without an error in the log. (Its half-open rule is in
 * {@code HalfOpenProbeTests}.)
 */
@ExtendWith(OutputCaptureExtension.class)
class CircuitBreakerPermitTests {

	private final CircuitBreaker breaker = CircuitBreaker.ofDefaults("permits");

	@Test
	void errorArrivingAfterTheCallerLeftIsDroppedQuietlyAndNotRecorded(CapturedOutput output) {
		Bulkhead full = Bulkhead.of("full", BulkheadConfig.custom().maxConcurrentCalls(1).build());
		full.acquirePermission();
		CircuitBreakerPermit.run(this.breaker, Mono.error(BulkheadFullException.createBulkheadFullException(full)))
			.subscribe(new LeavingAtOnce());
		assertThat(this.breaker.getMetrics().getNumberOfBufferedCalls()).isZero();
		assertThat(output).doesNotContain("onErrorDropped").doesNotContain("BulkheadFullException");
	}

	@Test
	void answerArrivingAfterTheCallerLeftIsNotRecorded() {
		LateAnswer late = new LateAnswer();
		List<Object> discarded = new CopyOnWriteArrayList<>();
		CircuitBreakerPermit.run(this.breaker, late).subscribe(new LeavingAtOnce(discarded::add));
		assertThat(late.cancelled).as("the caller let go before the answer came").isTrue();
		late.answer("late");
		assertThat(discarded).as("the answer arrived, and was dropped").containsExactly("late");
		assertThat(this.breaker.getMetrics().getNumberOfBufferedCalls()).isZero();
		assertThat(this.breaker.getMetrics().getNumberOfNotPermittedCalls()).isZero();
	}

	@Test
	void outcomesAreRecordedBeforeTheyTravelOn() {
		List<Integer> buffered = new CopyOnWriteArrayList<>();
		CircuitBreakerPermit.run(this.breaker, Mono.just("answer"))
			.doOnNext((answer) -> buffered.add(this.breaker.getMetrics().getNumberOfSuccessfulCalls()))
			.block();
		CircuitBreakerPermit.run(this.breaker, Mono.<String>error(new IllegalStateException("failed")))
			.doOnError((error) -> buffered.add(this.breaker.getMetrics().getNumberOfFailedCalls()))
			.onErrorResume((error) -> Mono.empty())
			.block();
		assertThat(buffered).containsExactly(1, 1);
	}

	/** A caller that lets go as soon as it has subscribed, and hears what is dropped after that. */
	private static final class LeavingAtOnce extends BaseSubscriber<Object> {

		private final Context context;

		LeavingAtOnce() {
			this((dropped) -> {
			});
		}

		LeavingAtOnce(Consumer<Object> onDiscard) {
			this.context = Operators.enableOnDiscard(Context.empty(), onDiscard);
		}

		@Override
		public Context currentContext() {
			return this.context;
		}

		@Override
		protected void hookOnSubscribe(Subscription subscription) {
			cancel();
		}

	}

	/**
	 * An upstream that answers when the test says, whether or not it was cancelled, as an HTTP
	 * answer already on its way does: the case the permit must drop.
	 */
	private static final class LateAnswer extends Mono<String> {

		private volatile boolean cancelled;

		private volatile CoreSubscriber<? super String> subscriber;

		@Override
		public void subscribe(CoreSubscriber<? super String> actual) {
			this.subscriber = actual;
			actual.onSubscribe(new Subscription() {

				@Override
				public void request(long n) {
				}

				@Override
				public void cancel() {
					LateAnswer.this.cancelled = true;
				}

			});
		}

		void answer(String value) {
			this.subscriber.onNext(value);
			this.subscriber.onComplete();
		}

	}

}
