package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongSupplier;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.BenchmarkAccess;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.engine.RouteBalancer;
import dev.llmresilience.gateway.LlmGateway;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;

/**
 * The hang evidence's false-positive run: a primary with no outage at all whose first tokens are
 * heavy-tailed (log-normal, p50 0.8 s, p99 15 s, as in {@link StragglerReplay}) and a healthy
 * backup, offered 5 to 20 calls a second (the rate changes every minute: 5, 10, 20, 10, 5, 20, 15,
 * 5, 20, 10) for 10 minutes, at {@code scale} of real time, with the built-in defaults scaled (hang
 * evidence at 3 x p99, at least 2 s, with 5 calls waiting; {@code first-token-timeout} 10 s). The
 * rule must never open the primary's breaker: the calls whose first token takes longer than the
 * first-token timeout (about 2 % of them) fail over to the backup one by one, as they do without
 * the rule. Printed: the breaker's openings, those of the hang rule among them, the attempts that
 * timed out, the answers by tier, and the waits.
 *
 * <p>System properties: {@code scale} (default 0.05), {@code minutes} (real-time minutes, default
 * 10), {@code seed} (default 15), {@code p99} (the first tokens' p99 in seconds, default 15; their
 * median stays 0.8 s; at 15 s the rule's threshold, 3 x p99, lies past the first-token timeout, so
 * the rule leaves the endpoint to the timeout; below about 3.3 s it applies), {@code liveness=fixed} (the rule off, for the run to compare
 * with). A warm-up of 2 minutes on endpoints of its own comes first (compiled code, as in production),
 * its figures not printed.
 */
public final class FalsePositiveReplay {

	private static final int[] RATES = { 5, 10, 20, 10, 5, 20, 15, 5, 20, 10 };

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");

	private static final double MEDIAN_SECONDS = 0.8;

	private FalsePositiveReplay() {
	}

	public static void main(String[] args) throws Exception {
		double scale = Double.parseDouble(System.getProperty("scale", "0.05"));
		int minutes = Integer.getInteger("minutes", 10);
		long seed = Long.getLong("seed", 15);
		Machine.describe(String.format(Locale.ROOT,
				"FalsePositiveReplay: heavy-tailed first tokens (p50 0.8 s, p99 %s s), no outage, 1/%.0f time",
				System.getProperty("p99", "15"), 1 / scale));
		System.out.println("warming up (2 minutes of the run, on endpoints of their own)...");
		run(scale, 2, seed + 1000, false);
		run(scale, minutes, seed, true);
		System.exit(0);
	}

	private static void run(double scale, int minutes, long seed, boolean print) throws InterruptedException {
		Duration normal = Endpoints.scaled(Duration.ofMillis(800), scale);
		try (StubProvider primary = new StubProvider("primary", normal, Duration.ZERO, StubProvider.FailureMode.HANG,
				firstTokens(scale, seed), false);
				StubProvider backup = new StubProvider("backup", normal, StubProvider.FailureMode.HANG, false);
				Endpoints endpoints = new Endpoints()) {
			LlmEndpoint first = endpoints.http(Endpoints.settings("primary", primary.baseUrl(), scale, 50));
			LlmEndpoint second = endpoints.http(Endpoints.settings("backup", backup.baseUrl(), scale, 50));
			if (print) {
				System.out.println("endpoint settings: " + Endpoints.describe(first.settings()));
			}
			EndpointRegistry registry = new EndpointRegistry(List.of(first, second),
					Map.of("default", List.of("primary", "backup")), List.of());
			LlmGateway gateway = BenchmarkAccess.gateway(registry, Endpoints.scaled(Endpoints.DEFAULT_DEADLINE, scale),
					RouteBalancer.priority(registry), null);
			AtomicInteger opened = new AtomicInteger();
			List<String> transitions = new ArrayList<>();
			long start = System.nanoTime();
			first.circuitBreaker().getEventPublisher().onStateTransition((event) -> {
				CircuitBreaker.Metrics metrics = first.circuitBreaker().getMetrics();
				if (event.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
					opened.incrementAndGet();
				}
				synchronized (transitions) {
					transitions.add(String.format(Locale.ROOT, "%s at %.1f s (real; failure rate %.0f %%, slow %.0f %%)",
							event.getStateTransition(), (System.nanoTime() - start) / 1e9 / scale,
							metrics.getFailureRate(), metrics.getSlowCallRate()));
				}
			});
			long minute = Endpoints.scaled(Duration.ofMinutes(1), scale).toNanos();
			int total = 0;
			for (int m = 0; m < minutes; m++) {
				total += RATES[m % RATES.length] * 60;
			}
			long[] waits = new long[total];
			Map<Tier, AtomicInteger> tiers = new ConcurrentHashMap<>();
			Map<Outcome, AtomicLong> primaryOutcomes = counts();
			Map<Outcome, AtomicLong> backupOutcomes = counts();
			AtomicInteger failed = new AtomicInteger();
			CountDownLatch done = new CountDownLatch(total);
			int index = 0;
			long at = start + TimeUnit.MILLISECONDS.toNanos(50);
			for (int m = 0; m < minutes; m++) {
				int calls = RATES[m % RATES.length] * 60;
				long interval = minute / calls;
				for (int c = 0; c < calls; c++, index++, at += interval) {
					for (long now = System.nanoTime(); now < at; now = System.nanoTime()) {
						LockSupport.parkNanos(at - now);
					}
					long target = at;
					int i = index;
					gateway.chat(REQUEST).subscribe((answer) -> {
						waits[i] = System.nanoTime() - target;
						tiers.computeIfAbsent(answer.tier(), (tier) -> new AtomicInteger()).incrementAndGet();
						for (Attempt attempt : answer.attempts()) {
							(attempt.endpoint().equals("primary") ? primaryOutcomes : backupOutcomes).get(attempt.outcome())
								.incrementAndGet();
						}
						done.countDown();
					}, (error) -> {
						waits[i] = System.nanoTime() - target;
						failed.incrementAndGet();
						done.countDown();
					});
				}
			}
			boolean finished = done.await(Endpoints.scaled(Duration.ofMinutes(3), scale).toNanos() + minute,
					TimeUnit.NANOSECONDS);
			if (!print) {
				return;
			}
			long[] sorted = Arrays.copyOf(waits, total);
			Arrays.sort(sorted);
			System.out.printf(Locale.ROOT, "%d calls over %d minutes (real), %s%n", total, minutes,
					finished ? "all ended" : "NOT ALL ENDED");
			System.out.println("answers by tier: " + tiers + ", errors: " + failed.get());
			System.out.println("primary attempts by outcome: " + describe(primaryOutcomes));
			System.out.println("backup attempts by outcome: " + describe(backupOutcomes));
			System.out.printf(Locale.ROOT, "waits (real time): p50 %.2f s, p99 %.2f s, max %.2f s%n",
					LatencyRecorder.percentile(sorted, 50) / 1e9 / scale, LatencyRecorder.percentile(sorted, 99) / 1e9 / scale,
					sorted[total - 1] / 1e9 / scale);
			System.out.println("primary breaker: " + opened.get() + " opening(s), " + BenchmarkAccess.hangOpenings(first)
					+ " by the hang evidence; transitions " + transitions);
			System.out.println("load avg at end: " + Machine.loadAverage());
		}
	}

	/** Log-normal first tokens: median 0.8 s and the p99 {@code -Dp99} (seconds, default 15), times the scale. */
	private static LongSupplier firstTokens(double scale, long seed) {
		double p99 = Double.parseDouble(System.getProperty("p99", "15"));
		return StragglerReplay.logNormal(MEDIAN_SECONDS, Math.log(p99 / MEDIAN_SECONDS) / 2.3263, scale, seed);
	}

	private static Map<Outcome, AtomicLong> counts() {
		Map<Outcome, AtomicLong> counts = new EnumMap<>(Outcome.class);
		for (Outcome outcome : Outcome.values()) {
			counts.put(outcome, new AtomicLong());
		}
		return counts;
	}

	private static String describe(Map<Outcome, AtomicLong> counts) {
		StringBuilder text = new StringBuilder();
		counts.forEach((outcome, count) -> {
			if (count.get() > 0) {
				text.append(outcome).append('=').append(count.get()).append(' ');
			}
		});
		return text.toString().trim();
	}

}
