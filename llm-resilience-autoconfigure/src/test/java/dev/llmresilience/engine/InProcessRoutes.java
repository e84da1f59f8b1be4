package dev.llmresilience.engine;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.ClientSettings.Limits;
import dev.llmresilience.spi.BalanceSource;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * Routes of real endpoints (each with its own Resilience4j breaker and bulkhead) built in process for
 * the balancer alone: their client is never called, since a balancer reads only whether an endpoint
 * admits a call and what its breaker recorded. So each test can order thousands of calls in
 * milliseconds, with the random numbers and the clock in its hands.
 */
final class InProcessRoutes {

	private final Map<String, LlmEndpoint> endpoints = new LinkedHashMap<>();

	private final Map<String, List<String>> routes = new LinkedHashMap<>();

	/**
	 * An endpoint of priority 0 without a price and a bulkhead of 10.
	 * @param name its name
	 * @return this
	 */
	InProcessRoutes endpoint(String name) {
		return endpoint(name, 0, null, 10);
	}

	/**
	 * An endpoint.
	 * @param name its name
	 * @param priority its priority
	 * @param price its price, or {@code null}
	 * @param bulkhead its bulkhead's size
	 * @return this
	 */
	InProcessRoutes endpoint(String name, int priority, EndpointSettings.@Nullable Price price, int bulkhead) {
		EndpointSettings settings = EndpointSettings.builder(name, URI.create("http://127.0.0.1:9/v1"), name + "-model")
			.routing(new EndpointSettings.Routing(priority, null, true, price))
			.timeouts(new EndpointSettings.Timeouts(Duration.ofSeconds(30), Duration.ofSeconds(1), Duration.ofSeconds(30),
					Duration.ofSeconds(30), true))
			.limits(Limits.DEFAULT.withMaxResponseSize(1 << 20))
			.circuitBreaker(TestEndpoints.DEFAULT_BREAKER)
			.retry(TestEndpoints.retry(1))
			.bulkhead(new EndpointSettings.BulkheadSettings(bulkhead, Duration.ZERO))
			.build();
		this.endpoints.put(name, TestEndpoints.endpoint(settings, new TestEndpoints.FakeClient(Flux::empty)));
		return this;
	}

	/**
	 * A route.
	 * @param name its name
	 * @param members its endpoints, in its order
	 * @return this
	 */
	InProcessRoutes route(String name, String... members) {
		this.routes.put(name, List.of(members));
		return this;
	}

	LlmEndpoint get(String name) {
		return this.endpoints.get(name);
	}

	EndpointRegistry registry() {
		return new EndpointRegistry(new ArrayList<>(this.endpoints.values()), this.routes, List.of());
	}

	/**
	 * The endpoints of a route, as the gateway hands them to the balancer.
	 * @param route the route
	 * @return its endpoints
	 */
	List<LlmEndpoint> members(String route) {
		return this.routes.get(route).stream().map(this.endpoints::get).toList();
	}

	/**
	 * What the breaker of an endpoint records for an attempt that answered after {@code millis}.
	 * @param name the endpoint
	 * @param millis its time to first token
	 */
	void answered(String name, long millis) {
		get(name).circuitBreaker().onSuccess(millis, TimeUnit.MILLISECONDS);
	}

	/**
	 * What the breaker of an endpoint records for an attempt that failed after {@code millis}.
	 * @param name the endpoint
	 * @param millis its time to the failure
	 */
	void failed(String name, long millis) {
		get(name).circuitBreaker()
			.onError(millis, TimeUnit.MILLISECONDS,
					new LlmUpstreamException(name, Outcome.SERVER_ERROR, 500, null, "HTTP 500", null));
	}

	/**
	 * The names of an order.
	 * @param order the endpoints
	 * @return their names
	 */
	static List<String> names(List<LlmEndpoint> order) {
		return order.stream().map(LlmEndpoint::name).toList();
	}

	/** Random numbers a test gives one by one, and a clock it moves. */
	static final class ScriptedSource implements BalanceSource {

		private final Deque<Double> numbers = new ArrayDeque<>();

		final AtomicLong nanos = new AtomicLong();

		ScriptedSource draws(double... numbers) {
			for (double number : numbers) {
				this.numbers.add(number);
			}
			return this;
		}

		@Override
		public double nextDouble() {
			Double next = this.numbers.poll();
			if (next == null) {
				throw new IllegalStateException("The test gave no more random numbers");
			}
			return next;
		}

		@Override
		public long nanoTime() {
			return this.nanos.get();
		}

		void advance(Duration time) {
			this.nanos.addAndGet(time.toNanos());
		}

		boolean drewAll() {
			return this.numbers.isEmpty();
		}

	}

}
