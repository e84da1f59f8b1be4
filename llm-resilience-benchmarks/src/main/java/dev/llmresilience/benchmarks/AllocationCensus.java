package dev.llmresilience.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

import javax.management.ObjectName;

/**
 * What one call of a {@link GatewayOverheadBenchmark} benchmark allocates, class by class: the JVM's
 * class histogram (every object, live or not) before and after a number of calls, under the Epsilon
 * collector so that nothing is collected in between, divided by the calls. It is how the success
 * path's allocations are found (BENCHMARKS.md, "What a successful call allocates"); run it as
 * <pre>
 * java -XX:+UnlockExperimentalVMOptions -XX:+UseEpsilonGC -Xms6g -Xmx6g -XX:-UseTLAB \
 *   -Dwhich=gatewaySuccess -cp benchmarks.jar dev.llmresilience.benchmarks.AllocationCensus
 * </pre>
 * System properties: {@code which} (gatewaySuccess, endpointSuccess, gatewayFallback,
 * gatewayBreakerOpen), {@code calls} (default 100000).
 */
public final class AllocationCensus {

	private AllocationCensus() {
	}

	public static void main(String[] args) throws Exception {
		int calls = Integer.getInteger("calls", 100_000);
		String which = System.getProperty("which", "gatewaySuccess");
		GatewayOverheadBenchmark benchmark = new GatewayOverheadBenchmark();
		benchmark.setUp();
		Supplier<Object> call = switch (which) {
			case "endpointSuccess" -> benchmark::endpointSuccess;
			case "gatewayFallback" -> benchmark::gatewayFallback;
			case "gatewayBreakerOpen" -> benchmark::gatewayBreakerOpen;
			default -> benchmark::gatewaySuccess;
		};
		// compiled code first: escape analysis removes some objects only once C2 has the method
		for (int i = 0; i < 200_000; i++) {
			call.get();
		}
		Map<String, long[]> before = histogram();
		for (int i = 0; i < calls; i++) {
			call.get();
		}
		Map<String, long[]> after = histogram();
		List<Map.Entry<String, long[]>> rows = new ArrayList<>();
		long total = 0;
		for (Map.Entry<String, long[]> entry : after.entrySet()) {
			long[] earlier = before.getOrDefault(entry.getKey(), new long[2]);
			long objects = entry.getValue()[0] - earlier[0];
			long bytes = entry.getValue()[1] - earlier[1];
			if (bytes > calls / 10) {
				rows.add(Map.entry(entry.getKey(), new long[] { objects, bytes }));
				total += bytes;
			}
		}
		rows.sort((a, b) -> Long.compare(b.getValue()[1], a.getValue()[1]));
		System.out.printf(Locale.ROOT, "%s: %.1f B per call in the classes above 0.1 B per call%n", which,
				(double) total / calls);
		for (Map.Entry<String, long[]> row : rows) {
			System.out.printf(Locale.ROOT, "%8.2f objects %8.1f B  %s%n", (double) row.getValue()[0] / calls,
					(double) row.getValue()[1] / calls, row.getKey());
		}
		benchmark.tearDown();
		System.exit(0);
	}

	private static Map<String, long[]> histogram() throws Exception {
		String text = (String) ManagementFactory.getPlatformMBeanServer()
			.invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
					new Object[] { new String[] { "-all" } }, new String[] { String[].class.getName() });
		Map<String, long[]> counts = new HashMap<>();
		for (String line : text.split("\n")) {
			String[] fields = line.trim().split("\\s+");
			if (fields.length >= 4 && fields[0].endsWith(":")) {
				counts.put(fields[3], new long[] { Long.parseLong(fields[1]), Long.parseLong(fields[2]) });
			}
		}
		return counts;
	}

}
