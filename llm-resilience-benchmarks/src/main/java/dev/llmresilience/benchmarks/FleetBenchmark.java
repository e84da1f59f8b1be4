package dev.llmresilience.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.llmresilience.benchmarks.FleetReplay.Fleet;
import dev.llmresilience.benchmarks.StubProvider.FailureMode;
import redis.embedded.RedisServer;

/**
 * Shared state across replicas, three measurements on a real redis-server on a free
 * loopback port: the outage replay with three replicas behind a round robin against one instance
 * ({@link FleetReplay}); how fast a fleet-wide open reaches every replica ({@link OpenPropagation});
 * and what shared state adds to a call with Redis healthy, frozen and stopped
 * ({@link SharedStateLatency}).
 *
 * <p>System properties: {@code parts} (comma-separated: replay, propagation, latency; default all),
 * {@code episodes} (propagation, default 300), {@code calls} (latency, default 20000), {@code scale}
 * (replay, default 0.01), {@code modes} and {@code fleets} (replay: which of each, default all).
 */
public final class FleetBenchmark {

	private FleetBenchmark() {
	}

	public static void main(String[] args) {
		List<String> parts = Arrays.asList(System.getProperty("parts", "replay,propagation,latency").split(","));
		FleetSupport.quiet();
		Machine.describe("FleetBenchmark: shared state across replicas on Redis");
		int port = FleetSupport.freePort();
		RedisServer redis = FleetSupport.redis(port);
		try {
			if (parts.contains("replay")) {
				replay(port);
			}
			if (parts.contains("propagation")) {
				propagation(port, Integer.getInteger("episodes", 300));
			}
		}
		finally {
			FleetSupport.stop(redis);
		}
		if (parts.contains("latency")) {
			latency(Integer.getInteger("calls", 20_000));
		}
		System.out.println("load avg at end: " + Machine.loadAverage());
		System.exit(0);
	}

	private static void replay(int port) {
		System.out.printf(Locale.ROOT, "%n-- outage replay at time scale %s (warming up: one instance, no outage)%n", FleetReplay.SCALE);
		FleetReplay.run(Fleet.ONE_INSTANCE, FailureMode.HTTP_500, port, "warmup", 0);
		List<String> rows = new ArrayList<>();
		int run = 0;
		List<String> modes = Arrays.asList(System.getProperty("modes", "HANG,HTTP_500").split(","));
		List<String> fleets = Arrays.asList(System.getProperty("fleets", "ONE_INSTANCE,THREE_REPLICAS_LOCAL_STATE,"
				+ "THREE_REPLICAS_SHARED_STATE").split(","));
		for (FailureMode mode : FailureMode.values()) {
			if (!modes.contains(mode.name())) {
				continue;
			}
			FleetReplay.Result one = null;
			for (Fleet fleet : Fleet.values()) {
				if (!fleets.contains(fleet.name())) {
					continue;
				}
				System.out.printf(Locale.ROOT, "%s, %s (load avg %s)%n", mode, fleet, Machine.loadAverage());
				FleetReplay.Result result = FleetReplay.run(fleet, mode, port, "replay" + (run++), FleetReplay.OUTAGE_REQUESTS);
				one = (one != null) ? one : result;
				rows.add(result.row(one));
				System.gc();
			}
		}
		System.out.println();
		System.out.println("| primary in the outage | who takes the traffic | primary hits: before / after the first open | primary hits in all (x one instance's) | first open (real) | answered | mean wait (real) | breakers opened before the outage |");
		System.out.println("|---|---|---|---|---|---|---|---|");
		rows.forEach(System.out::println);
	}

	private static void propagation(int port, int episodes) {
		System.out.printf(Locale.ROOT, "%n-- open propagation: %d episodes (load avg %s)%n", episodes, Machine.loadAverage());
		OpenPropagation.Result result = OpenPropagation.run(port, episodes);
		System.out.println("| from | to | samples | p50 | p90 | p99 | max |");
		System.out.println("|---|---|---|---|---|---|---|");
		row("the deciding replica's open", "another replica's open", result.toOthers());
		row("the failure that tipped the fleet's window", "the last replica's open", result.failureToAll());
	}

	private static void row(String from, String to, long[] sorted) {
		System.out.printf(Locale.ROOT, "| %s | %s | %d | %s | %s | %s | %s |%n", from, to, sorted.length,
				micros(LatencyRecorder.percentile(sorted, 50)), micros(LatencyRecorder.percentile(sorted, 90)),
				micros(LatencyRecorder.percentile(sorted, 99)), micros(sorted.length > 0 ? sorted[sorted.length - 1] : 0));
	}

	private static void latency(int calls) {
		System.out.printf(Locale.ROOT, "%n-- latency per call, %d calls per condition, one at a time (load avg %s)%n", calls,
				Machine.loadAverage());
		Map<SharedStateLatency.Condition, long[]> results = SharedStateLatency.run(calls);
		long[] local = results.get(SharedStateLatency.Condition.LOCAL_STATE);
		System.out.println("| state | calls | p50 | p99 | p99.9 | max | added at p50 / p99 (vs local) |");
		System.out.println("|---|---|---|---|---|---|---|");
		results.forEach((condition, sorted) -> System.out.printf(Locale.ROOT, "| %s | %d | %s | %s | %s | %s | %s / %s |%n",
				condition.name().toLowerCase(Locale.ROOT).replace('_', ' '), sorted.length,
				micros(LatencyRecorder.percentile(sorted, 50)), micros(LatencyRecorder.percentile(sorted, 99)),
				micros(LatencyRecorder.percentile(sorted, 99.9)), micros(sorted[sorted.length - 1]),
				micros(LatencyRecorder.percentile(sorted, 50) - LatencyRecorder.percentile(local, 50)),
				micros(LatencyRecorder.percentile(sorted, 99) - LatencyRecorder.percentile(local, 99))));
	}

	private static String micros(long nanos) {
		return (Math.abs(nanos) >= 10_000_000) ? String.format(Locale.ROOT, "%.1f ms", nanos / 1e6)
				: String.format(Locale.ROOT, "%.0f µs", nanos / 1e3);
	}

}
