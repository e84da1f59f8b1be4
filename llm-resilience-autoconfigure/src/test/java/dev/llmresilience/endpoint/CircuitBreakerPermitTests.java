package dev.llmresilience.endpoint;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.bulkhead.BulkheadFullException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;

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
		CircuitBreakerPermit.run(this.breaker, Mono.just("late")).subscribe(new LeavingAtOnce());
		assertThat(this.breaker.getMetrics().getNumberOfBufferedCalls()).isZero();
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

	/** A caller that lets go as soon as it has subscribed. */
	private static final class LeavingAtOnce extends BaseSubscriber<Object> {

		@Override
		protected void hookOnSubscribe(Subscription subscription) {
			cancel();
		}

	}

}
