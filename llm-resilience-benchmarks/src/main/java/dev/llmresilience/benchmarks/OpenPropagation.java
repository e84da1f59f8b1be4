package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import dev.llmresilience.benchmarks.StubProvider.FailureMode;
import dev.llmresilience.benchmarks.StubProvider.Outage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.spi.BreakerControl;
import dev.llmresilience.spi.BreakerControl.ManualState;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * How fast a fleet-wide open reaches every replica: three replicas in one JVM (so that one
 * {@link System#nanoTime()} clock times them all) share state on Redis; a primary that answers 500
 * is called round robin, one call at a time, until the fleet opens it on all three; the breakers are
 * then reset (fleet-wide) and the episode repeated. Per episode: from the deciding replica's own
 * open to each other replica's open, and from the failure that tipped the fleet's window (the last
 * one recorded before the first open) to the last replica's open.
 */
final class OpenPropagation {

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");

	/**
	 * The figures.
	 *
	 * @param toOthers deciding replica's open to another replica's open, ns, sorted (two per episode)
	 * @param failureToAll tipping failure to the last replica's open, ns, sorted (one per episode)
	 */
	record Result(long[] toOthers, long[] failureToAll) {
	}

	private OpenPropagation() {
	}

	static Result run(int redisPort, int episodes) {
		try (StubProvider primary = new StubProvider("primary", Duration.ZERO, FailureMode.HTTP_500, false)) {
			primary.outage(new Outage(Long.MIN_VALUE, Long.MAX_VALUE));
			List<AnnotationConfigApplicationContext> replicas = new ArrayList<>();
			AtomicLongArray opened = new AtomicLongArray(3);
			ConcurrentLinkedQueue<Long> failures = new ConcurrentLinkedQueue<>();
			for (int i = 0; i < 3; i++) {
				Map<String, Object> properties = FleetSupport.shared(redisPort, "p" + i);
				properties.put("llm.shared-state.key-prefix", "propagation:");
				properties.put("llm.endpoints.primary.base-url", primary.baseUrl());
				properties.put("llm.endpoints.primary.model", "primary-model");
				properties.put("llm.defaults.retry.max-attempts", 1);
				properties.put("llm.defaults.circuit-breaker.wait-duration-in-open-state", "1h");
				AnnotationConfigApplicationContext replica = FleetSupport.replica(properties);
				CircuitBreaker breaker = replica.getBean(EndpointRegistry.class).endpoint("primary").circuitBreaker();
				int index = i;
				breaker.getEventPublisher().onError((event) -> failures.add(System.nanoTime()));
				breaker.getEventPublisher().onStateTransition((event) -> {
					if (event.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
						opened.compareAndSet(index, 0, System.nanoTime());
					}
				});
				replicas.add(replica);
			}
			List<LlmGateway> gateways = replicas.stream().map((replica) -> replica.getBean(LlmGateway.class)).toList();
			LlmEndpoint first = replicas.get(0).getBean(EndpointRegistry.class).endpoint("primary");
			List<Long> toOthers = new ArrayList<>();
			List<Long> failureToAll = new ArrayList<>();
			for (int episode = 0; episode < episodes; episode++) {
				for (int i = 0; i < 3; i++) {
					opened.set(i, 0);
				}
				failures.clear();
				for (int i = 0; !allOpen(opened) && i < 200; i++) {
					gateways.get(i % 3).chat(REQUEST).block(Duration.ofSeconds(5));
				}
				long until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
				while (!allOpen(opened) && System.nanoTime() < until) {
					LockSupport.parkNanos(100_000);
				}
				if (!allOpen(opened)) {
					throw new IllegalStateException("Episode " + episode + ": the fleet did not open every replica: "
							+ replicas.stream().map((replica) -> replica.getBean(EndpointRegistry.class).endpoint("primary")
								.circuitBreaker().getState()).toList() + ", opened at " + opened);
				}
				long decided = Math.min(opened.get(0), Math.min(opened.get(1), opened.get(2)));
				long last = Math.max(opened.get(0), Math.max(opened.get(1), opened.get(2)));
				long tipping = failures.stream().filter((at) -> at <= decided).mapToLong(Long::longValue).max().orElse(decided);
				for (int i = 0; i < 3; i++) {
					if (opened.get(i) != decided) {
						toOthers.add(opened.get(i) - decided);
					}
				}
				failureToAll.add(last - tipping);
				replicas.get(0).getBean(BreakerControl.class).transition(first.circuitBreaker(), ManualState.RESET);
				until = System.nanoTime() + Duration.ofSeconds(5).toNanos();
				while (!allClosed(replicas) && System.nanoTime() < until) {
					LockSupport.parkNanos(100_000);
				}
				if (!allClosed(replicas)) {
					throw new IllegalStateException("Episode " + episode + ": the fleet's RESET did not close every replica: "
							+ replicas.stream().map((replica) -> replica.getBean(EndpointRegistry.class).endpoint("primary")
								.circuitBreaker().getState() + " " + replica.getBean(dev.llmresilience.spi.SharedState.class).status()).toList());
				}
			}
			replicas.forEach(AnnotationConfigApplicationContext::close);
			return new Result(sorted(toOthers), sorted(failureToAll));
		}
	}

	private static boolean allOpen(AtomicLongArray opened) {
		return opened.get(0) != 0 && opened.get(1) != 0 && opened.get(2) != 0;
	}

	private static boolean allClosed(List<AnnotationConfigApplicationContext> replicas) {
		return replicas.stream()
			.allMatch((replica) -> replica.getBean(EndpointRegistry.class).endpoint("primary").circuitBreaker().getState()
					== CircuitBreaker.State.CLOSED);
	}

	private static long[] sorted(List<Long> values) {
		long[] array = values.stream().mapToLong(Long::longValue).toArray();
		Arrays.sort(array);
		return array;
	}

}
