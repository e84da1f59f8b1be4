package dev.llmresilience.engine;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings.Limits;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.LlmClient;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static dev.llmresilience.engine.TestEndpoints.retry;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An attempt's breaker permit ({@link CircuitBreakerPermit}) records an outcome before it travels
 * on, and nothing once the caller has gone; what arrives then is dropped without an error in the
 * log. (Its half-open rule is in {@code HalfOpenProbeTests}.)
 */
@ExtendWith(OutputCaptureExtension.class)
class CircuitBreakerPermitTests {

	private final HeldCall upstream = new HeldCall();

	private final LlmEndpoint endpoint = new TestEndpoints(() -> 0.5).factory()
		.create(EndpointSettings.builder("permits", URI.create("http://127.0.0.1:9/v1"), "permit-model")
			.timeouts(new EndpointSettings.Timeouts(Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30),
					Duration.ofSeconds(30), true))
			.limits(Limits.DEFAULT.withMaxResponseSize(1 << 20))
			.circuitBreaker(TestEndpoints.DEFAULT_BREAKER)
			.retry(retry(1))
			.build(), this.upstream);

	private final CircuitBreaker breaker = this.endpoint.circuitBreaker();

	@Test
	void errorArrivingAfterTheCallerLeftIsDroppedQuietlyAndNotRecorded(CapturedOutput output) {
		this.endpoint.chat(ChatRequest.ofUser("hello"), (attempt) -> {
		}).subscribe().dispose();
		assertThat(this.upstream.cancelled).as("the caller left after the call went upstream").hasValue(1);
		this.upstream.call.tryEmitError(new LlmUpstreamException("permits", Outcome.SERVER_ERROR, 500, null, "late", null));
		assertThat(this.breaker.getMetrics().getNumberOfBufferedCalls()).isZero();
		assertThat(this.endpoint.bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(50);
		assertThat(output).doesNotContain("onErrorDropped").doesNotContain("SERVER_ERROR");
	}

	@Test
	void answerArrivingAfterTheCallerLeftIsNotRecorded() {
		List<Attempt> attempts = new CopyOnWriteArrayList<>();
		this.endpoint.chat(ChatRequest.ofUser("hello"), attempts::add).subscribe().dispose();
		assertThat(this.upstream.cancelled).as("the caller left after the call went upstream").hasValue(1);
		Sinks.EmitResult late = this.upstream.call.tryEmitValue(new Completion("late", null, "stop", List.of(), null));
		assertThat(late).as("the held call had its answer sent").isEqualTo(Sinks.EmitResult.OK);
		assertThat(this.breaker.getMetrics().getNumberOfBufferedCalls()).isZero();
		assertThat(attempts).as("a cancelled attempt is not reported").isEmpty();
		assertThat(this.endpoint.bulkhead().getMetrics().getAvailableConcurrentCalls()).isEqualTo(50);
	}

	@Test
	void outcomesAreRecordedBeforeTheyTravelOn() {
		List<Integer> buffered = new CopyOnWriteArrayList<>();
		Mono<Completion> success = this.endpoint.chat(ChatRequest.ofUser("hello"), (attempt) -> {
		}).doOnNext((answer) -> buffered.add(this.breaker.getMetrics().getNumberOfSuccessfulCalls()));
		success.subscribe();
		this.upstream.call.tryEmitValue(new Completion("answer", null, "stop", List.of(), null));
		Mono<Completion> failure = this.endpoint.chat(ChatRequest.ofUser("hello"), (attempt) -> {
		})
			.doOnError((error) -> buffered.add(this.breaker.getMetrics().getNumberOfFailedCalls()))
			.onErrorResume((error) -> Mono.empty());
		failure.subscribe();
		this.upstream.call.tryEmitError(new LlmUpstreamException("permits", Outcome.SERVER_ERROR, 500, null, "failed", null));
		assertThat(buffered).containsExactly(1, 1);
	}

	/** An upstream whose latest call waits until the test answers it. */
	private static final class HeldCall implements LlmClient {

		volatile Sinks.One<Completion> call = Sinks.one();

		final AtomicInteger cancelled = new AtomicInteger();

		@Override
		public Mono<Completion> chat(ChatRequest request) {
			return Mono.defer(() -> {
				Sinks.One<Completion> call = Sinks.one();
				this.call = call;
				// the answer is not dropped when the caller leaves: the sink still holds it for the test
				return call.asMono().doOnCancel(this.cancelled::incrementAndGet);
			});
		}

	}

}
