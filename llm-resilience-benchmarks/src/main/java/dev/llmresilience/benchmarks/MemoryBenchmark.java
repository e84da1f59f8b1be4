package dev.llmresilience.benchmarks;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.LlmClient;
import reactor.core.publisher.Mono;

/**
 * Memory: (1) heap after GC and bytes allocated per call across 1,000,000 gateway calls over an
 * in-process stub transport (a flat heap means no call leaves anything behind); (2) the heap
 * that each configured endpoint takes, for 100 and 1,000 endpoints built by
 * {@code EndpointFactory}, with a stub transport and with the real OpenAI-compatible client and
 * its own (unused) connection pool as the auto-configuration builds them.
 *
 * <p>Allocation is read from {@code com.sun.management.ThreadMXBean}, summed over all live
 * threads; heap is the used heap after two {@code System.gc()}.
 */
public final class MemoryBenchmark {

	private static final Completion COMPLETION = new Completion("Hello! How can I help?", "stub-model", "stop",
			List.of(), new Usage(9, 7));

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");

	private static final LlmClient STUB = (request) -> Mono.just(COMPLETION);

	private static final int CALLS = Integer.getInteger("calls", 1_000_000);

	private static final int SAMPLES = 10;

	private static final MemoryMXBean MEMORY = ManagementFactory.getMemoryMXBean();

	private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory
		.getThreadMXBean();

	/** Keeps what is measured reachable until the heap is read. */
	private static Object retained;

	private MemoryBenchmark() {
	}

	public static void main(String[] args) {
		Machine.describe("MemoryBenchmark");
		calls();
		for (int count : new int[] { 100, 1000 }) {
			footprint(count, false);
			footprint(count, true);
		}
		System.out.println("load avg at end: " + Machine.loadAverage());
	}

	private static void calls() {
		try (Endpoints endpoints = new Endpoints()) {
			LlmEndpoint endpoint = endpoints.endpoint(Endpoints.settings("primary", "http://127.0.0.1:9/v1"), STUB);
			LlmGateway gateway = Endpoints.gateway(Map.of("default", List.of("primary")),
					Endpoints.DEFAULT_DEADLINE, endpoint);
			for (int i = 0; i < 100_000; i++) {
				call(gateway);
				STUB.chat(REQUEST).block();
			}
			long directBefore = allocated();
			for (int i = 0; i < CALLS; i++) {
				STUB.chat(REQUEST).block();
			}
			long direct = allocated() - directBefore;
			System.out.printf(Locale.ROOT, "%nstub called directly: %d calls, %.1f bytes allocated per call%n", CALLS,
					(double) direct / CALLS);
			System.out.printf(Locale.ROOT, "%ngateway over the stub: %d calls, heap used after GC every %d calls%n", CALLS,
					CALLS / SAMPLES);
			System.out.println("     calls   heap after GC (KiB)   allocated per call in the interval (bytes)");
			long heapStart = heapAfterGc();
			System.out.printf(Locale.ROOT, "%10d %21d%n", 0, heapStart / 1024);
			long[] heaps = new long[SAMPLES];
			long totalAllocated = 0;
			for (int sample = 0; sample < SAMPLES; sample++) {
				long before = allocated();
				for (int i = 0; i < CALLS / SAMPLES; i++) {
					call(gateway);
				}
				long interval = allocated() - before;
				totalAllocated += interval;
				heaps[sample] = heapAfterGc();
				System.out.printf(Locale.ROOT, "%10d %21d %15.1f%n", (sample + 1) * (CALLS / SAMPLES), heaps[sample] / 1024,
						(double) interval / (CALLS / SAMPLES));
			}
			long growth = heaps[SAMPLES - 1] - heapStart;
			System.out.printf(Locale.ROOT,
					"heap after GC: %d KiB at the start, %d KiB after %d calls (%+d KiB, %+.3f bytes per call); min %d KiB, max %d KiB over the samples%n",
					heapStart / 1024, heaps[SAMPLES - 1] / 1024, CALLS, growth / 1024, (double) growth / CALLS,
					java.util.Arrays.stream(heaps).min().getAsLong() / 1024,
					java.util.Arrays.stream(heaps).max().getAsLong() / 1024);
			System.out.printf(Locale.ROOT, "allocated: %.1f bytes per gateway call over %d calls (%.1f per direct stub call)%n",
					(double) totalAllocated / CALLS, CALLS, (double) direct / CALLS);
		}
	}

	private static void call(LlmGateway gateway) {
		ChatResponse response = gateway.chat(REQUEST).block();
		if (response == null || response.tier() != Tier.PRIMARY) {
			throw new IllegalStateException("Expected a PRIMARY answer but got " + response);
		}
	}

	private static void footprint(int count, boolean http) {
		Endpoints endpoints = new Endpoints();
		List<LlmEndpoint> built = new ArrayList<>(count);
		retained = null;
		long before = heapAfterGc();
		for (int i = 0; i < count; i++) {
			var settings = Endpoints.settings("endpoint-" + i, "http://127.0.0.1:9/v1");
			built.add(http ? endpoints.http(settings) : endpoints.endpoint(settings, STUB));
		}
		retained = List.of(endpoints, built);
		long after = heapAfterGc();
		System.out.printf(Locale.ROOT, "%n%d endpoints (%s): heap after GC %+d KiB, %.1f KiB per endpoint%n", count,
				http ? "OpenAiChatClient + WebClient + own ConnectionProvider, as auto-configured"
						: "stub transport: settings, breaker, retry, bulkhead in their registries",
				(after - before) / 1024, (after - before) / 1024.0 / count);
		retained = null;
		endpoints.close();
	}

	private static long heapAfterGc() {
		System.gc();
		System.gc();
		try {
			Thread.sleep(Duration.ofMillis(100).toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		return MEMORY.getHeapMemoryUsage().getUsed();
	}

	private static long allocated() {
		long[] ids = THREADS.getAllThreadIds();
		long total = 0;
		for (long bytes : THREADS.getThreadAllocatedBytes(ids)) {
			if (bytes > 0) {
				total += bytes;
			}
		}
		return total;
	}

}
