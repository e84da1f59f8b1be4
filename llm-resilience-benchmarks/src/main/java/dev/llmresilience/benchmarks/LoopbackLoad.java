package dev.llmresilience.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import java.util.stream.LongStream;

import com.sun.management.OperatingSystemMXBean;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.gateway.LlmGateway;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionProvider;

/**
 * Raw {@link RawClient WebClient} against {@code LlmGateway.chat} (the real OpenAI-compatible
 * client from {@code OpenAiClientFactory}), both calling the same loopback {@link StubProvider}
 * that answers a canned completion at once. Closed loop: at concurrency N, N callers each send
 * their next call when the previous one is answered. The sides run in rotating rounds
 * (A B C D E, E D C B A, B C D E A, ...) in one JVM after a warm-up, so drift in the machine's load hits
 * them alike.
 *
 * <p>Two pairs do the same wire work: {@code raw} (one JSON request, one JSON completion) with
 * {@code gateway-json} (an endpoint with {@code upstream-streaming: false}), and {@code raw-sse}
 * (the same request with {@code "stream": true}, its server-sent events read to the end of the
 * body) with {@code gateway} (the built-in defaults, so {@code chat} goes upstream as a stream and
 * is assembled). {@code raw-sse-done} reads the events only up to {@code [DONE]}, as the gateway's
 * reader does, which closes the connection (see {@link RawClient#stream(boolean)}); the
 * {@code new conns} column counts the connections the stub accepted in each round. Each side is
 * summed up against {@code raw}, then each gateway side against its raw counterparts. Every round also reads the process's CPU time per call (client, server and
 * load generator together), which the machine's load moves far less than calls/s.
 *
 * <p>System properties: {@code rounds} (per concurrency, default 8), {@code roundMillis} (per side
 * and round, default 2000), {@code warmupMillis} (per side and concurrency, default 15000: after 4 s,
 * the first measured rounds on a 2-core machine were still getting faster, round after round),
 * {@code attribution} (default false: adds a third side, the raw call behind one Reactor timer, the
 * one the attempt's watchdog sets per call, to show how much of the gap it explains),
 * {@code concurrency} (comma separated, default {@code 1,64}), {@code sides} (names, comma separated,
 * default all; the others are summed up against the first that runs, {@code raw} unless left out), {@code summary} (a file
 * that each round's figures are written to as tab-separated values, one line per side and round).
 */
public final class LoopbackLoad {

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");


	private LoopbackLoad() {
	}

	public static void main(String[] args) {
		int rounds = Integer.getInteger("rounds", 8);
		Duration round = Duration.ofMillis(Long.getLong("roundMillis", 2000));
		Duration warmup = Duration.ofMillis(Long.getLong("warmupMillis", 15000));
		boolean attribution = Boolean.getBoolean("attribution");
		int[] concurrencies = Summary.concurrencies(System.getProperty("concurrency", "1,64"));
		List<String> only = Summary.names(System.getProperty("sides", ""));
		Summary summary = Summary.open(System.getProperty("summary"));
		Machine.describe("LoopbackLoad: raw WebClient vs LlmGateway.chat on loopback");
		System.out.printf(Locale.ROOT, "rounds: %d per concurrency, %d ms per side and round, warm-up %d ms per side%n",
				rounds, round.toMillis(), warmup.toMillis());
		ConnectionProvider rawPool = RawClient.pool("raw", 64);
		try (StubProvider provider = new StubProvider("load", Duration.ZERO, StubProvider.FailureMode.HANG, false);
				Endpoints endpoints = new Endpoints()) {
			RawClient raw = new RawClient(provider.baseUrl(), rawPool);
			// Built-in defaults but a bulkhead (and so a pool) of 64, so that concurrency 64 is not cut to 50
			LlmEndpoint endpoint = endpoints.http(Endpoints.settings("primary", provider.baseUrl(), 1.0, 64));
			LlmGateway gateway = Endpoints.gateway(Map.of("default", List.of("primary")),
					Endpoints.DEFAULT_DEADLINE, endpoint);
			// The same, but chat sent upstream as one JSON request: the raw side's wire work
			LlmEndpoint plain = endpoints.http(Endpoints.settings("plain", provider.baseUrl(), 1.0, 64, false));
			LlmGateway plainGateway = Endpoints.gateway(Map.of("default", List.of("plain")),
					Endpoints.DEFAULT_DEADLINE, plain);
			System.out.println("gateway:      " + Endpoints.describe(endpoint.settings()));
			System.out.println("gateway-json: " + Endpoints.describe(plain.settings()));
			List<Side> sides = new ArrayList<>();
			LongSupplier connections = provider::connections;
			sides.add(new Side("raw", connections, () -> raw.chat().map((content) -> !content.isEmpty())));
			sides.add(new Side("gateway", connections,
					() -> gateway.chat(REQUEST).map((response) -> response.tier() == Tier.PRIMARY)));
			sides.add(new Side("gateway-json", connections,
					() -> plainGateway.chat(REQUEST).map((response) -> response.tier() == Tier.PRIMARY)));
			sides.add(new Side("raw-sse", connections, () -> raw.stream(false).map((content) -> !content.isEmpty())));
			sides.add(new Side("raw-sse-done", connections,
					() -> raw.stream(true).map((content) -> !content.isEmpty())));
			if (attribution) {
				// The raw call behind one Reactor timer, as the attempt's watchdog sets one, and nothing else
				sides.add(new Side("raw+1tmo", connections, () -> raw.chat()
					.timeout(endpoint.settings().timeouts().timeout())
					.map((content) -> !content.isEmpty())));
			}
			sides.removeIf((side) -> !only.isEmpty() && !only.contains(side.name));
			if (sides.isEmpty()) {
				throw new IllegalArgumentException("No side is named in -Dsides=" + only);
			}
			for (int concurrency : concurrencies) {
				sides.forEach((side) -> side.run(concurrency, warmup));
			}
			for (int concurrency : concurrencies) {
				measure(sides, concurrency, rounds, round, summary);
			}
		}
		finally {
			rawPool.dispose();
			summary.close();
		}
		System.out.println("load avg at end: " + Machine.loadAverage());
	}

	/**
	 * Rounds in which every side runs once, the order rotated each round, then each side against
	 * the first (raw), then each gateway side against the raw side with its wire work.
	 */
	private static void measure(List<Side> sides, int concurrency, int rounds, Duration length, Summary summary) {
		System.out.printf(Locale.ROOT, "%n-- concurrency %d (load avg %s)%n", concurrency, Machine.loadAverage());
		summary.load(concurrency);
		System.out.println("round order   side           calls  errors     calls/s   p50 us   p99 us  CPU us/call  new conns");
		int count = sides.size();
		List<List<Run>> runs = new ArrayList<>();
		sides.forEach((side) -> runs.add(new ArrayList<>()));
		for (int i = 0; i < rounds; i++) {
			Run[] round = new Run[count];
			StringBuilder order = new StringBuilder();
			for (int k = 0; k < count; k++) {
				int sideIndex = (i % 2 == 0) ? (i / 2 + k) % count : (count - 1 - k + i / 2) % count;
				round[sideIndex] = sides.get(sideIndex).run(concurrency, length);
				order.append((char) ('A' + sideIndex));
			}
			for (int k = 0; k < count; k++) {
				runs.get(k).add(round[k]);
				print(i + 1, order.toString(), round[k]);
				Run run = round[k];
				summary.round(concurrency, i + 1, order.toString(), run.side(), run.latencies().length, run.errors(),
						run.throughput(), run.percentile(50), run.percentile(99), run.cpuPerCall());
			}
		}
		List<Run> raws = runs.get(0);
		long[] rawAll = pooled(raws);
		long rawP50 = LatencyRecorder.percentile(rawAll, 50);
		long rawP99 = LatencyRecorder.percentile(rawAll, 99);
		System.out.printf(Locale.ROOT, "summary c=%d: raw: %.0f calls/s (median of rounds), p50 %.1f us, p99 %.1f us (pooled), errors %d; CPU %.1f us/call (median of rounds)%n",
				concurrency, median(raws.stream().mapToDouble(Run::throughput).toArray()), rawP50 / 1000.0,
				rawP99 / 1000.0, raws.stream().mapToLong(Run::errors).sum(), cpuPerCall(raws));
		for (int k = 1; k < count; k++) {
			compare(concurrency, "summary", sides.get(k).name, runs.get(k), raws);
		}
		// Like for like: each gateway side against the raw side that does its wire work
		likeForLike(sides, runs, concurrency, "gateway-json", "raw");
		likeForLike(sides, runs, concurrency, "gateway", "raw-sse");
		likeForLike(sides, runs, concurrency, "gateway", "raw-sse-done");
	}

	private static void likeForLike(List<Side> sides, List<List<Run>> runs, int concurrency, String side, String raw) {
		int index = indexOf(sides, side);
		int rawIndex = indexOf(sides, raw);
		if (index >= 0 && rawIndex >= 0) {
			compare(concurrency, "like-for-like", side, runs.get(index), runs.get(rawIndex));
		}
	}

	private static int indexOf(List<Side> sides, String name) {
		for (int i = 0; i < sides.size(); i++) {
			if (sides.get(i).name.equals(name)) {
				return i;
			}
		}
		return -1;
	}

	/** One side against another: throughput ratio within each round, added p50 and p99, CPU per call. */
	private static void compare(int concurrency, String label, String name, List<Run> others, List<Run> raws) {
		int rounds = raws.size();
		long[] rawAll = pooled(raws);
		long rawP50 = LatencyRecorder.percentile(rawAll, 50);
		long rawP99 = LatencyRecorder.percentile(rawAll, 99);
		String against = raws.get(0).side();
		long[] all = pooled(others);
		double[] ratios = new double[rounds];
		double[] addedP50 = new double[rounds];
		for (int i = 0; i < rounds; i++) {
			ratios[i] = others.get(i).throughput() / raws.get(i).throughput();
			addedP50[i] = (others.get(i).percentile(50) - raws.get(i).percentile(50)) / 1000.0;
		}
		long p50 = LatencyRecorder.percentile(all, 50);
		long p99 = LatencyRecorder.percentile(all, 99);
		System.out.printf(Locale.ROOT,
				"%s c=%d: %s: %.0f calls/s, p50 %.1f us, p99 %.1f us, errors %d; throughput ratio to %s median %.3f (min %.3f, max %.3f); added p50 %.1f us (pooled), %.1f us (median of rounds); added p99 %.1f us (pooled); CPU %.1f us/call against %.1f (medians of rounds)%n",
				label, concurrency, name, median(others.stream().mapToDouble(Run::throughput).toArray()),
				p50 / 1000.0, p99 / 1000.0, others.stream().mapToLong(Run::errors).sum(), against, median(ratios),
				min(ratios), max(ratios), (p50 - rawP50) / 1000.0, median(addedP50), (p99 - rawP99) / 1000.0,
				cpuPerCall(others), cpuPerCall(raws));
	}

	private static void print(int round, String order, Run run) {
		System.out.printf(Locale.ROOT, "%5d %-7s %-12s %7d %7d %11.0f %8.1f %8.1f %12.1f %10d%n", round, order,
				run.side(), run.latencies().length, run.errors(), run.throughput(), run.percentile(50) / 1000.0,
				run.percentile(99) / 1000.0, run.cpuPerCall() / 1000.0, run.connections());
	}

	private static double cpuPerCall(List<Run> runs) {
		return median(runs.stream().mapToDouble(Run::cpuPerCall).toArray()) / 1000.0;
	}

	private static long cpuTime() {
		return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
	}

	private static long[] pooled(List<Run> runs) {
		return runs.stream().flatMapToLong((run) -> LongStream.of(run.latencies())).sorted().toArray();
	}

	private static double median(double[] values) {
		double[] sorted = values.clone();
		java.util.Arrays.sort(sorted);
		int middle = sorted.length / 2;
		return (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
	}

	private static double min(double[] values) {
		return java.util.Arrays.stream(values).min().orElse(0);
	}

	private static double max(double[] values) {
		return java.util.Arrays.stream(values).max().orElse(0);
	}

	/** One side of the comparison: a call that answers whether it got a usable answer. */
	private static final class Side {

		private final String name;

		private final Supplier<Mono<Boolean>> call;

		private final LongSupplier connections;

		private final LatencyRecorder recorder = new LatencyRecorder(4_000_000);

		Side(String name, LongSupplier connections, Supplier<Mono<Boolean>> call) {
			this.name = name;
			this.connections = connections;
			this.call = call;
		}

		Run run(int concurrency, Duration length) {
			this.recorder.reset();
			RoundEvent event = new RoundEvent();
			event.begin();
			AtomicLong errors = new AtomicLong();
			long connectionsBefore = this.connections.getAsLong();
			long cpuBefore = cpuTime();
			long start = System.nanoTime();
			long end = start + length.toNanos();
			Flux.range(0, concurrency)
				.flatMap((worker) -> Mono.defer(() -> {
					long sent = System.nanoTime();
					return this.call.get().doOnNext((usable) -> {
						if (usable) {
							this.recorder.record(System.nanoTime() - sent);
						}
						else if (errors.getAndIncrement() == 0) {
							System.out.println("  first unusable answer of " + this.name + " in this run (counted as an error)");
						}
					}).onErrorResume((error) -> {
						if (errors.getAndIncrement() == 0) {
							System.out.println("  first error of " + this.name + " in this run: " + error);
						}
						return Mono.empty();
					});
				}).repeat(() -> System.nanoTime() < end), concurrency)
				.blockLast();
			long elapsed = System.nanoTime() - start;
			event.end();
			long[] latencies = this.recorder.sorted();
			event.side = this.name;
			event.concurrency = concurrency;
			event.calls = latencies.length + errors.get();
			event.commit();
			return new Run(this.name, latencies, errors.get(), elapsed, cpuTime() - cpuBefore,
					this.connections.getAsLong() - connectionsBefore);
		}

	}

	/** One side's round: its latencies, errors, time, CPU time of the whole process, connections opened. */
	private record Run(String side, long[] latencies, long errors, long elapsedNanos, long cpuNanos, long connections) {

		double cpuPerCall() {
			return (double) this.cpuNanos / Math.max(1, this.latencies.length + this.errors);
		}

		double throughput() {
			return (this.latencies.length + this.errors) / (this.elapsedNanos / 1e9);
		}

		long percentile(double percent) {
			return LatencyRecorder.percentile(this.latencies, percent);
		}

	}

}
