package dev.llmresilience.benchmarks;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.ThreadMXBean;
import dev.llmresilience.benchmarks.Peers.Peer;

/**
 * Question (a) of the peer comparison: what each peer costs per call and how many calls it carries, side by
 * side in one JVM against one loopback {@link PeerServer} that answers at once. Closed loop: N
 * application threads each make their next blocking call when the last one is answered, at N = 1
 * and 64. Each peer is warmed up at each concurrency, then the peers run in rounds whose order
 * rotates, so that drift in the machine's load hits them alike. Besides calls/s and latency (noisy
 * on a shared machine), each round reads two figures the load barely moves: bytes allocated per
 * call over all threads, and CPU time per call of the whole process (server included, the same
 * for every peer).
 *
 * <p>System properties: {@code rounds} (default 6), {@code roundMillis} (default 2000),
 * {@code warmupMillis} (per peer and concurrency, default 8000), {@code peers} (names, comma
 * separated, default all), {@code concurrency} (comma separated, default {@code 1,64}),
 * {@code summary} (a file that each round's figures are written to as tab-separated values, one
 * line per peer and round, see {@link Summary}).
 */
public final class PeerComparison {

	private PeerComparison() {
	}

	public static void main(String[] args) throws Exception {
		int rounds = Integer.getInteger("rounds", 6);
		Duration round = Duration.ofMillis(Long.getLong("roundMillis", 2000));
		Duration warmup = Duration.ofMillis(Long.getLong("warmupMillis", 8000));
		String only = System.getProperty("peers", "");
		int[] concurrencies = Summary.concurrencies(System.getProperty("concurrency", "1,64"));
		Machine.describe("PeerComparison: per-call cost and throughput of the peers on loopback");
		try (PeerServer server = new PeerServer("load", () -> 0, StubProvider.FailureMode.HANG);
				Peers peers = new Peers(1.0);
				Summary summary = Summary.open(System.getProperty("summary"))) {
			String url = server.baseUrl();
			List<Peer> all = List.of(peers.raw(url, false), peers.resilience4j(url, null), peers.springAi(url, null),
					peers.langChain4j(url, null), peers.gateway(url, null, null));
			List<Peer> chosen = all.stream().filter((peer) -> only.isEmpty() || only.contains(peer.name())).toList();
			for (int concurrency : concurrencies) {
				System.out.printf(Locale.ROOT, "%n-- concurrency %d: warm-up (load avg %s)%n", concurrency,
						Machine.loadAverage());
				for (Peer peer : chosen) {
					Run run = run(peer, concurrency, warmup);
					System.out.printf(Locale.ROOT, "warm-up %-28s %9.0f calls/s, %d errors%n", peer.name(),
							run.throughput(), run.errors);
				}
				measure(chosen, concurrency, rounds, round, summary);
			}
		}
		System.out.println("load avg at end: " + Machine.loadAverage());
		System.exit(0);
	}

	private static void measure(List<Peer> peers, int concurrency, int rounds, Duration length, Summary summary)
			throws Exception {
		System.out.printf(Locale.ROOT, "%n-- concurrency %d (load avg %s)%n", concurrency, Machine.loadAverage());
		summary.load(concurrency);
		System.out.println("round peer                          calls/s   p50 us   p99 us   B/call  CPU us/call errors");
		List<List<Run>> runs = new ArrayList<>();
		peers.forEach((peer) -> runs.add(new ArrayList<>()));
		for (int i = 0; i < rounds; i++) {
			int[] order = new int[peers.size()];
			StringBuilder letters = new StringBuilder();
			for (int k = 0; k < peers.size(); k++) {
				order[k] = (i % 2 == 0) ? (i + k) % peers.size() : (peers.size() - 1 - k + i) % peers.size();
				letters.append((char) ('A' + order[k]));
			}
			for (int k = 0; k < peers.size(); k++) {
				int index = order[k];
				Run run = run(peers.get(index), concurrency, length);
				runs.get(index).add(run);
				System.out.printf(Locale.ROOT, "%5d %-28s %9.0f %8.1f %8.1f %8.0f %11.1f %6d%n", i + 1,
						peers.get(index).name(), run.throughput(), run.percentile(50) / 1e3, run.percentile(99) / 1e3,
						run.bytesPerCall(), run.cpuPerCall() / 1e3, run.errors);
				summary.round(concurrency, i + 1, letters.toString(), peers.get(index).name(), run.latencies.length,
						run.errors, run.throughput(), run.percentile(50), run.percentile(99), run.cpuPerCall(),
						run.bytesPerCall());
			}
		}
		double[] rawThroughput = runs.get(0).stream().mapToDouble(Run::throughput).toArray();
		long[] rawLatencies = pooled(runs.get(0));
		System.out.printf(Locale.ROOT, "%nsummary c=%d | peer | calls/s (median of rounds) | ratio to raw (median; min-max) "
				+ "| p50 / p99 us (pooled) | added p50 us | B/call (median) | CPU us/call (median) | errors%n", concurrency);
		for (int k = 0; k < peers.size(); k++) {
			List<Run> own = runs.get(k);
			double[] ratios = new double[own.size()];
			for (int i = 0; i < own.size(); i++) {
				ratios[i] = own.get(i).throughput() / rawThroughput[i];
			}
			long[] latencies = pooled(own);
			System.out.printf(Locale.ROOT, "| %s | %.0f | %.3f (%.3f-%.3f) | %.1f / %.1f | %+.1f | %.0f | %.1f | %d |%n",
					peers.get(k).name(), median(own.stream().mapToDouble(Run::throughput).toArray()), median(ratios),
					Arrays.stream(ratios).min().orElse(0), Arrays.stream(ratios).max().orElse(0),
					LatencyRecorder.percentile(latencies, 50) / 1e3, LatencyRecorder.percentile(latencies, 99) / 1e3,
					(LatencyRecorder.percentile(latencies, 50) - LatencyRecorder.percentile(rawLatencies, 50)) / 1e3,
					median(own.stream().mapToDouble(Run::bytesPerCall).toArray()),
					median(own.stream().mapToDouble(Run::cpuPerCall).toArray()) / 1e3,
					own.stream().mapToLong((run) -> run.errors).sum());
		}
	}

	static Run run(Peer peer, int concurrency, Duration length) throws InterruptedException {
		LatencyRecorder recorder = new LatencyRecorder(2_000_000);
		AtomicLong errors = new AtomicLong();
		CountDownLatch done = new CountDownLatch(concurrency);
		ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
		// the callers' own allocation is read by each of them: a thread that has ended reports none
		AtomicLong callers = new AtomicLong();
		long allocatedBefore = allocated();
		long cpuBefore = cpu();
		long start = System.nanoTime();
		long end = start + length.toNanos();
		for (int i = 0; i < concurrency; i++) {
			Thread caller = new Thread(() -> {
				long own = threads.getCurrentThreadAllocatedBytes();
				try {
					while (System.nanoTime() < end) {
						long sent = System.nanoTime();
						if (peer.call()) {
							recorder.record(System.nanoTime() - sent);
						}
						else {
							errors.incrementAndGet();
						}
					}
				}
				finally {
					callers.addAndGet(threads.getCurrentThreadAllocatedBytes() - own);
					done.countDown();
				}
			}, "caller-" + i);
			caller.start();
		}
		done.await();
		long elapsed = System.nanoTime() - start;
		long[] latencies = recorder.sorted();
		return new Run(latencies, errors.get(), elapsed, allocated() - allocatedBefore + callers.get(), cpu() - cpuBefore);
	}

	private static long allocated() {
		ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
		return Arrays.stream(threads.getThreadAllocatedBytes(threads.getAllThreadIds())).filter((bytes) -> bytes > 0).sum();
	}

	private static long cpu() {
		return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
	}

	private static long[] pooled(List<Run> runs) {
		return runs.stream().flatMapToLong((run) -> Arrays.stream(run.latencies)).sorted().toArray();
	}

	static double median(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		int middle = sorted.length / 2;
		return (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
	}

	record Run(long[] latencies, long errors, long elapsedNanos, long allocatedBytes, long cpuNanos) {

		double throughput() {
			return (this.latencies.length + this.errors) / (this.elapsedNanos / 1e9);
		}

		long percentile(double percent) {
			return LatencyRecorder.percentile(this.latencies, percent);
		}

		double bytesPerCall() {
			return (double) this.allocatedBytes / Math.max(1, this.latencies.length + this.errors);
		}

		double cpuPerCall() {
			return (double) this.cpuNanos / Math.max(1, this.latencies.length + this.errors);
		}

	}

}
