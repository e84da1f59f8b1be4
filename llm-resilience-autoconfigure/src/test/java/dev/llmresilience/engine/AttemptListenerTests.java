package dev.llmresilience.engine;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.gateway.LlmGatewayListener;
import dev.llmresilience.protocol.ClientSettings.Limits;
import dev.llmresilience.protocol.Completion;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Sinks;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Listeners (and so the meters) hear of every attempt the circuit breaker recorded, even a success
 * whose caller let go of the answer just as it came: the endpoint's retry drops an answer that
 * arrives after a cancel, so listeners are told before it. Found by the concurrency hammer, where
 * the breaker counted a few more successes than the meters did.
 */
class AttemptListenerTests {

	@Test
	void successRecordedAsTheCallerCancelsIsStillHeard() {
		Sinks.One<Completion> answer = Sinks.one();
		EndpointFactory factory = new EndpointFactory(CircuitBreakerRegistry.ofDefaults(), RetryRegistry.ofDefaults(),
				BulkheadRegistry.ofDefaults(), new FailureClassifier(), Clock.systemUTC(), () -> 0.5);
		EndpointSettings settings = EndpointSettings.builder("only", URI.create("http://127.0.0.1:9/v1"), "only-model")
			.timeouts(new EndpointSettings.Timeouts(Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30),
					Duration.ofSeconds(30), true))
			.limits(Limits.DEFAULT.withMaxResponseSize(1 << 20))
			.circuitBreaker(TestEndpoints.DEFAULT_BREAKER)
			.retry(new EndpointSettings.RetrySettings(3, Duration.ofMillis(1), 2.0, Duration.ofMillis(4), 0.25,
					Duration.ofSeconds(10)))
			.build();
		LlmEndpoint endpoint = factory.create(settings, (request) -> answer.asMono());
		List<Outcome> heard = new CopyOnWriteArrayList<>();
		LlmGatewayListener listener = new LlmGatewayListener() {

			@Override
			public void onAttempt(String route, EndpointSettings endpoint, Attempt attempt,
					@Nullable Completion completion) {
				heard.add(attempt.outcome());
			}

		};
		LlmGateway gateway = new DefaultLlmGateway(
				new EndpointRegistry(List.of(endpoint), Map.of("default", List.of("only")), List.of()),
				GatewaySettings.of(Duration.ofSeconds(30)), Degradation.none(), List.of(listener),
				ObservationRegistry.NOOP);

		AtomicReference<Disposable> caller = new AtomicReference<>();
		// the caller lets go in the instant between the breaker recording the answer and its delivery
		endpoint.circuitBreaker().getEventPublisher().onSuccess((event) -> caller.get().dispose());
		caller.set(gateway.chat(ChatRequest.ofUser("hello")).subscribe());
		answer.tryEmitValue(new Completion("an answer", null, "stop", List.of(), null));

		assertThat(caller.get().isDisposed()).isTrue();
		assertThat(endpoint.circuitBreaker().getMetrics().getNumberOfSuccessfulCalls()).isOne();
		assertThat(heard).containsExactly(Outcome.SUCCESS);
	}

}
