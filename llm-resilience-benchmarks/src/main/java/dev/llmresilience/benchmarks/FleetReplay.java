package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;

import dev.llmresilience.benchmarks.StubProvider.FailureMode;
import dev.llmresilience.benchmarks.StubProvider.Outage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.gateway.LlmGateway;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;

import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * The 11-minute outage of {@link OutageReplay} (same traffic, same 1/100 time scale by default, same
 * stub providers), sent to three replicas behind a round robin, with and without shared state, and
 * to one instance taking all of it, whose primary hits the fleet's are compared with. Each replica
 * reaches the provider through stub servers of its own, with the same outage.
 */
final class FleetReplay {

	/** The time scale: 0.01 (the default, as {@link OutageReplay}) or more for a machine too busy for it. */
	static final double SCALE = Double.parseDouble(System.getProperty("scale", "0.01"));

	static final Duration NORMAL_LATENCY = scaled(Duration.ofMillis(800));

	static final Duration OUTAGE = scaled(Duration.ofSeconds(660));

	static final int OUTAGE_REQUESTS = 4_200;

	static final Duration BEFORE = scaled(Duration.ofSeconds(100));

	static final Duration AFTER = scaled(Duration.ofSeconds(200));

	private static final long INTERVAL_NANOS = OUTAGE.toNanos() / OUTAGE_REQUESTS;

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");

	/** Who takes the traffic. */
	enum Fleet {

		ONE_INSTANCE(1, false), THREE_REPLICAS_LOCAL_STATE(3, false), THREE_REPLICAS_SHARED_STATE(3, true);

		final int replicas;

		final boolean shared;

		Fleet(int replicas, boolean shared) {
			this.replicas = replicas;
			this.shared = shared;
		}

	}

	/**
	 * One run's figures (outage window only).
	 *
	 * @param fleet who took the traffic
	 * @param mode what the primary did
	 * @param hitsBeforeOpen primary hits in the outage before the first replica's breaker opened
	 * @param hitsAfterOpen primary hits in the outage after it (probes)
	 * @param firstOpenMillis time to the first open, scaled back to real time (ms)
	 * @param answered requests of the outage answered (not BUSY)
	 * @param meanWaitMillis mean wait of the outage's requests, real time (ms)
	 * @param opensBeforeOutage breakers opened during the normal traffic before the outage (a busy
	 * machine's first-token timeouts; 0 on a quiet one)
	 */
	record Result(Fleet fleet, FailureMode mode, long hitsBeforeOpen, long hitsAfterOpen, double firstOpenMillis,
			long answered, double meanWaitMillis, long opensBeforeOutage) {

		long hits() {
			return this.hitsBeforeOpen + this.hitsAfterOpen;
		}

		String row(Result one) {
			return String.format(Locale.ROOT, "| %s | %s | %d / %d | **%d** (x%.2f) | %.1f s | %d of %d (%.1f %%) | %.2f s | %d |",
					this.mode, this.fleet.name().toLowerCase(Locale.ROOT).replace('_', ' '), this.hitsBeforeOpen,
					this.hitsAfterOpen, hits(), (double) hits() / one.hits(), this.firstOpenMillis / 1000, this.answered,
					OUTAGE_REQUESTS, 100.0 * this.answered / OUTAGE_REQUESTS, this.meanWaitMillis / 1000,
					this.opensBeforeOutage);
		}

	}

	private FleetReplay() {
	}

	static Result run(Fleet fleet, FailureMode mode, int redisPort, String prefix, int outageRequests) {
		List<StubProvider> primaries = new ArrayList<>();
		List<StubProvider> backups = new ArrayList<>();
		List<AnnotationConfigApplicationContext> replicas = new ArrayList<>();
		try {
			AtomicLongArray firstOpen = new AtomicLongArray(fleet.replicas);
			AtomicLong opensBefore = new AtomicLong();
			long normalBefore = BEFORE.toNanos() / INTERVAL_NANOS;
			long normalAfter = AFTER.toNanos() / INTERVAL_NANOS;
			int total = (int) (normalBefore + outageRequests + normalAfter);
			long start = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
			long outageStart = start + normalBefore * INTERVAL_NANOS;
			long outageEnd = outageStart + outageRequests * INTERVAL_NANOS;
			for (int i = 0; i < fleet.replicas; i++) {
				// each replica reaches the provider through a server of its own, with the same outage
				StubProvider primary = new StubProvider("primary" + i, NORMAL_LATENCY, mode, true);
				StubProvider backup = new StubProvider("backup" + i, NORMAL_LATENCY, FailureMode.HANG, true);
				primary.outage(new Outage(outageStart, outageEnd));
				primaries.add(primary);
				backups.add(backup);
				Map<String, Object> properties = fleet.shared ? FleetSupport.shared(redisPort, prefix + i) : new LinkedHashMap<>();
				properties.put("llm.shared-state.key-prefix", prefix + ":");
				properties.putAll(scaled(primary, backup));
				AnnotationConfigApplicationContext replica = FleetSupport.replica(properties);
				CircuitBreaker breaker = replica.getBean(EndpointRegistry.class).endpoint("primary").circuitBreaker();
				int index = i;
				breaker.getEventPublisher().onStateTransition((event) -> {
					if (event.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
						long now = System.nanoTime();
						if (now < outageStart) {
							opensBefore.incrementAndGet();
						}
						else {
							firstOpen.compareAndSet(index, 0, now);
						}
					}
				});
				replicas.add(replica);
			}
			List<LlmGateway> gateways = replicas.stream().map((replica) -> replica.getBean(LlmGateway.class)).toList();
			long[] waits = new long[total];
			boolean[] answered = new boolean[total];
			CountDownLatch done = new CountDownLatch(total);
			for (int i = 0; i < total; i++) {
				long target = start + i * INTERVAL_NANOS;
				for (long now = System.nanoTime(); now < target; now = System.nanoTime()) {
					LockSupport.parkNanos(target - now);
				}
				int index = i;
				gateways.get(i % gateways.size()).chat(REQUEST).subscribe((response) -> {
					waits[index] = System.nanoTime() - target;
					answered[index] = response.tier() != Tier.BUSY;
					done.countDown();
				}, (error) -> {
					waits[index] = System.nanoTime() - target;
					done.countDown();
				});
			}
			done.await(20, TimeUnit.SECONDS);
			long earliest = Long.MAX_VALUE;
			for (int i = 0; i < firstOpen.length(); i++) {
				earliest = (firstOpen.get(i) > 0) ? Math.min(earliest, firstOpen.get(i)) : earliest;
			}
			long opened = earliest;
			long hitsBefore = 0;
			long hitsAfter = 0;
			StringBuilder each = new StringBuilder();
			for (int i = 0; i < primaries.size(); i++) {
				long before = primaries.get(i).arrivals().stream().filter((a) -> a.down() && a.at() < opened).count();
				long after = primaries.get(i).arrivals().stream().filter((a) -> a.down() && a.at() >= opened).count();
				hitsBefore += before;
				hitsAfter += after;
				each.append(String.format(Locale.ROOT, " r%d: %d / %d, opened at %+.1f s;", i, before, after,
						(firstOpen.get(i) > 0) ? (firstOpen.get(i) - outageStart) / 1e9 / SCALE : Double.NaN));
			}
			System.out.println("  per replica, primary hits before / after the first open:" + each);
			long answers = 0;
			double waitSum = 0;
			for (int i = (int) normalBefore; i < normalBefore + outageRequests; i++) {
				answers += answered[i] ? 1 : 0;
				waitSum += waits[i];
			}
			double firstOpenMillis = (opened == Long.MAX_VALUE) ? Double.NaN : (opened - outageStart) / 1e6 / SCALE;
			return new Result(fleet, mode, hitsBefore, hitsAfter, firstOpenMillis, answers,
					(outageRequests > 0) ? waitSum / outageRequests / 1e6 / SCALE : 0, opensBefore.get());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		finally {
			replicas.forEach(AnnotationConfigApplicationContext::close);
			primaries.forEach(StubProvider::close);
			backups.forEach(StubProvider::close);
		}
	}

	/**
	 * The built-in defaults with every duration scaled, as {@link Endpoints#settings} makes them (the
	 * hang evidence's floors included: unscaled, they would leave the rule nothing to act on before
	 * the scaled first-token timeout); {@code -Dliveness=fixed} as there.
	 */
	private static Map<String, Object> scaled(StubProvider primary, StubProvider backup) {
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("llm.endpoints.primary.base-url", primary.baseUrl());
		properties.put("llm.endpoints.primary.model", "primary-model");
		properties.put("llm.endpoints.backup.base-url", backup.baseUrl());
		properties.put("llm.endpoints.backup.model", "backup-model");
		properties.put("llm.endpoints.backup.priority", 1);
		properties.put("llm.defaults.timeout", millis(Duration.ofSeconds(60)));
		properties.put("llm.defaults.connect-timeout", millis(Duration.ofSeconds(5)));
		properties.put("llm.defaults.first-token-timeout", millis(Duration.ofSeconds(10)));
		properties.put("llm.defaults.stream-idle-timeout", millis(Duration.ofSeconds(30)));
		properties.put("llm.defaults.circuit-breaker.wait-duration-in-open-state", millis(Duration.ofSeconds(30)));
		properties.put("llm.defaults.circuit-breaker.slow-call-duration-threshold", millis(Duration.ofSeconds(60)));
		properties.put("llm.defaults.retry.initial-backoff", millis(Duration.ofMillis(500)));
		properties.put("llm.defaults.retry.max-backoff", millis(Duration.ofSeconds(8)));
		properties.put("llm.defaults.retry.max-retry-after", millis(Duration.ofSeconds(10)));
		properties.put("llm.defaults.bulkhead.released-calls-wait", Endpoints.FIXED ? "0ms" : millis(Duration.ofSeconds(2)));
		properties.put("llm.defaults.liveness.hang-detection.enabled", !Endpoints.FIXED);
		properties.put("llm.defaults.liveness.hang-detection.floor", millis(Duration.ofSeconds(2)));
		properties.put("llm.defaults.liveness.probe-floor", millis(Duration.ofSeconds(Endpoints.FIXED ? 10 : 3)));
		properties.put("llm.gateway.deadline", millis(Duration.ofSeconds(90)));
		properties.put("llm.gateway.deferral.enabled", false);
		return properties;
	}

	private static Duration scaled(Duration duration) {
		return Duration.ofNanos(Math.round(duration.toNanos() * SCALE));
	}

	private static String millis(Duration duration) {
		return scaled(duration).toMillis() + "ms";
	}

}
