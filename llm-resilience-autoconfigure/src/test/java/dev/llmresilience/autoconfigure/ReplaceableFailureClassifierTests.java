package dev.llmresilience.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmAutoConfiguration;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.LlmGateway;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A {@link FailureClassifier} bean of the application decides, for every endpoint the
 * auto-configuration builds, what is retried and what the circuit breaker counts: seen from the
 * requests a real local provider receives and from the breaker's state, beside the starter's own
 * rules on the same provider.
 */
class ReplaceableFailureClassifierTests {

	private final MockWebServer provider = new MockWebServer();

	private ApplicationContextRunner contextRunner;

	@BeforeEach
	void startProviderThatAlwaysAnswers500() throws Exception {
		this.provider.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return new MockResponse.Builder().code(500)
					.setHeader("Content-Type", "application/json")
					.body("{\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}")
					.build();
			}
		});
		this.provider.start();
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(LlmAutoConfiguration.class))
			.withPropertyValues("llm.endpoints.primary.base-url=" + this.provider.url("/v1"),
					"llm.endpoints.primary.model=m1", "llm.defaults.upstream-streaming=false",
					"llm.defaults.retry.max-attempts=3", "llm.defaults.retry.initial-backoff=1ms",
					"llm.defaults.retry.max-backoff=1ms", "llm.defaults.circuit-breaker.sliding-window-size=4",
					"llm.defaults.circuit-breaker.minimum-number-of-calls=4");
	}

	@AfterEach
	void stopProvider() {
		this.provider.close();
	}

	@Test
	void startersRulesRetryA500AndOpenTheBreakerAfterFourFailedAttempts() {
		this.contextRunner.run((context) -> {
			call(context);
			assertThat(this.provider.getRequestCount()).as("one call: the attempt and two retries").isEqualTo(3);
			for (int i = 0; i < 4; i++) {
				call(context);
			}
			// the second call's first attempt is the fourth failure: the breaker opens and refuses the rest
			assertThat(this.provider.getRequestCount()).isEqualTo(4);
			assertThat(breaker(context).getState()).isEqualTo(CircuitBreaker.State.OPEN);
		});
	}

	@Test
	void userClassifierThatNeitherRetriesNorCountsA500KeepsTheBreakerClosed() {
		this.contextRunner.withUserConfiguration(LenientClassifierConfiguration.class).run((context) -> {
			assertThat(context).getBean(FailureClassifier.class).isInstanceOf(LenientClassifier.class);
			call(context);
			assertThat(this.provider.getRequestCount()).as("one call: no retry").isEqualTo(1);
			for (int i = 0; i < 4; i++) {
				call(context);
			}
			assertThat(this.provider.getRequestCount()).as("every call reaches the provider").isEqualTo(5);
			assertThat(breaker(context).getState()).isEqualTo(CircuitBreaker.State.CLOSED);
			assertThat(breaker(context).getMetrics().getNumberOfFailedCalls()).isZero();
		});
	}

	@Test
	void userClassifierChangesRetriesNotWhatTheErrorIsNorHowTheGatewayDegrades() {
		this.contextRunner.withUserConfiguration(LenientClassifierConfiguration.class).run((context) -> {
			ChatResponse answer = context.getBean(LlmGateway.class).chat("hello").block(Duration.ofSeconds(10));
			// still a SERVER_ERROR, still degraded to BUSY as the fixed table says; tried once, not three times
			assertThat(answer.tier()).isEqualTo(Tier.BUSY);
			assertThat(answer.attempts()).extracting(Attempt::endpoint, Attempt::outcome)
				.containsExactly(tuple("primary", Outcome.SERVER_ERROR));
		});
	}

	@Test
	void userClassifiersRetryAfterDecidesWhetherARateLimitIsWaitedFor() {
		this.provider.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return new MockResponse.Builder().code(429).setHeader("Content-Type", "application/json").body("{\"error\":{\"message\":\"slow down\"}}").build();
			}
		});
		this.contextRunner.run((context) -> {
			call(context);
			assertThat(this.provider.getRequestCount()).as("no Retry-After: retried after the backoff").isEqualTo(3);
		});
		this.contextRunner.withUserConfiguration(PatientProviderConfiguration.class).run((context) -> {
			call(context);
			assertThat(this.provider.getRequestCount()).as("a wait over max-retry-after (10s): not retried")
				.isEqualTo(3 + 1);
		});
	}

	@Test
	void userClassifierAskingForNoWaitGetsTheBackoffNotRetriesBackToBack() {
		List<Long> arrivals = new CopyOnWriteArrayList<>();
		this.provider.setDispatcher(new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				arrivals.add(System.nanoTime());
				return new MockResponse.Builder().code(429).setHeader("Content-Type", "application/json").body("{\"error\":{\"message\":\"slow down\"}}").build();
			}
		});
		this.contextRunner.withUserConfiguration(ImpatientProviderConfiguration.class)
			.withPropertyValues("llm.defaults.retry.max-attempts=2", "llm.defaults.retry.initial-backoff=500ms",
					"llm.defaults.retry.max-backoff=500ms", "llm.defaults.retry.jitter=0")
			.run((context) -> {
				// a first call loads what the first retry would otherwise wait for, which could pass for a backoff
				call(context);
				arrivals.clear();
				call(context);
				assertThat(arrivals).hasSize(2);
				// the backoff is a least wait, so this bound holds on a loaded machine too
				assertThat(Duration.ofNanos(arrivals.get(1) - arrivals.get(0))).isGreaterThanOrEqualTo(Duration.ofMillis(500));
			});
	}

	private static void call(AssertableApplicationContext context) {
		context.getBean(LlmGateway.class).chat("hello").onErrorResume((ex) -> Mono.empty())
			.block(Duration.ofSeconds(10));
	}

	private static CircuitBreaker breaker(AssertableApplicationContext context) {
		return context.getBean(EndpointRegistry.class).endpoint("primary").circuitBreaker();
	}

	/** Treats a server error as the caller's business: not worth a retry, not the endpoint's fault. */
	static class LenientClassifier extends FailureClassifier {

		@Override
		public boolean isRetryable(Throwable error, Duration maxRetryAfter) {
			return outcomeOf(error) != Outcome.SERVER_ERROR && super.isRetryable(error, maxRetryAfter);
		}

		@Override
		public boolean isBreakerFailure(Throwable error) {
			return outcomeOf(error) != Outcome.SERVER_ERROR && super.isBreakerFailure(error);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class PatientProviderConfiguration {

		/** Knows that this provider wants a minute between rate-limited requests, header or not. */
		@Bean
		FailureClassifier patientClassifier() {
			return new FailureClassifier() {

				@Override
				public Duration retryAfter(Throwable error) {
					return (outcomeOf(error) == Outcome.RATE_LIMITED) ? Duration.ofMinutes(1) : super.retryAfter(error);
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ImpatientProviderConfiguration {

		/** Asks for no wait at all: the endpoint's backoff still applies. */
		@Bean
		FailureClassifier impatientClassifier() {
			return new FailureClassifier() {

				@Override
				public Duration retryAfter(Throwable error) {
					return Duration.ZERO;
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class LenientClassifierConfiguration {

		@Bean
		FailureClassifier lenientClassifier() {
			return new LenientClassifier();
		}

	}

}
