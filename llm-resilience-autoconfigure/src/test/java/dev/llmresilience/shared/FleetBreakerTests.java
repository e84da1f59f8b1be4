package dev.llmresilience.shared;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.llmresilience.MockUpstreams;
import dev.llmresilience.actuate.LlmBreakersEndpoint;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import mockwebserver3.Dispatcher;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.RecordedRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.context.ApplicationContext;

import static dev.llmresilience.MockUpstreams.chat;
import static dev.llmresilience.MockUpstreams.endpoint;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Breakers shared by replicas on one real Redis (issue 12, item 2): a provider outage opens every
 * replica after the fleet's first 20 failures (not 20 each), late joiners included; one replica's
 * own failures do not take the provider from the others; states set by hand apply fleet-wide.
 */
class FleetBreakerTests {

	private RedisServerSupport redis;

	private final MockWebServer failing = new MockWebServer();

	private final MockWebServer healthy = new MockWebServer();

	@BeforeEach
	void start() throws Exception {
		this.redis = RedisServerSupport.start();
		this.failing.setDispatcher(always(MockUpstreams.error(503, "overloaded")));
		this.healthy.setDispatcher(always(MockUpstreams.completion("fine")));
		this.failing.start();
		this.healthy.start();
	}

	@AfterEach
	void stop() {
		this.failing.close();
		this.healthy.close();
		this.redis.close();
	}

	private String[] provider(MockWebServer server, String... more) {
		List<String> properties = new java.util.ArrayList<>(List.of("llm.endpoints.primary.base-url=" + server.url("/v1"),
				"llm.endpoints.primary.model=primary-model", "llm.defaults.retry.max-attempts=1"));
		properties.addAll(List.of(more));
		return properties.toArray(String[]::new);
	}

	@Test
	void providerOutageOpensEveryReplicaAfterTwentyFailuresInAll() {
		Replicas.run(List.of(Replicas.replica(this.redis, "a", provider(this.failing)),
				Replicas.replica(this.redis, "b", provider(this.failing)),
				Replicas.replica(this.redis, "c", provider(this.failing))), (replicas) -> {
					for (int i = 0; i < 60 && !allOpen(replicas); i++) {
						assertThat(chat(replicas.get(i % 3)).tier()).isEqualTo(Tier.BUSY);
					}
					await().atMost(Duration.ofSeconds(5)).until(() -> allOpen(replicas));
					// 20 failures in all opened the fleet; a call or two may have passed while the open travelled
					assertThat(this.failing.getRequestCount()).isBetween(20, 22);
					for (ApplicationContext replica : replicas) {
						assertThat(endpoint(replica, "primary").circuitBreaker().getMetrics().getNumberOfFailedCalls())
							.as("failures in a replica's own window: far from its own 20").isLessThan(20);
					}
					int before = this.failing.getRequestCount();
					replicas.forEach((replica) -> assertThat(chat(replica).tier()).isEqualTo(Tier.BUSY));
					assertThat(this.failing.getRequestCount()).isEqualTo(before);
					// a replica that starts now learns it from the fleet's state
					Replicas.replica(this.redis, "late", provider(this.failing)).run((late) -> {
						assertThat(endpoint(late, "primary").circuitBreaker().getState()).isEqualTo(CircuitBreaker.State.OPEN);
						assertThat(chat(late).tier()).isEqualTo(Tier.BUSY);
						assertThat(this.failing.getRequestCount()).isEqualTo(before);
					});
				});
	}

	private static boolean allOpen(List<? extends ApplicationContext> replicas) {
		return replicas.stream()
			.allMatch((replica) -> endpoint(replica, "primary").circuitBreaker().getState() == CircuitBreaker.State.OPEN);
	}

	private static Dispatcher always(MockResponse response) {
		return new Dispatcher() {
			@Override
			public MockResponse dispatch(RecordedRequest request) {
				return response;
			}
		};
	}

}
