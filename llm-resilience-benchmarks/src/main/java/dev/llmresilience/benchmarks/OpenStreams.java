package dev.llmresilience.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.management.JMException;
import javax.management.ObjectName;

import com.sun.management.OperatingSystemMXBean;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.BenchmarkAccess;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.openai.OpenAiClientFactory;
import io.netty.buffer.PooledByteBufAllocator;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.netty.resources.ConnectionPoolMetrics;
import reactor.netty.resources.ConnectionProvider;

/**
 * Many streams open at once through one gateway: N streams against a {@link TickingStub} that sends
 * a content chunk every {@code tokenMillis} for {@code seconds}, read through
 * {@code LlmGateway.stream} (one endpoint, the real OpenAI-compatible client, the built-in defaults
 * but for its bulkhead) and, the same way, through a plain WebClient reading the server-sent events
 * ({@link RawClient#contents}), one side after the other. Each side reports the delay of every
 * content chunk (its receive time at the consumer minus the stub's {@code nanoTime} written into it)
 * over the steady part (all N streams open), the process's CPU time per chunk over that part, the
 * heap after a full GC with all N open minus the same before they opened, per stream, and how every
 * stream ended. Part {@code cut}: at half time the stub closes every open connection; how the
 * streams ended is counted, then, once all have ended, the bulkhead's permits, the pool's acquired
 * connections, the live threads, the open file descriptors and the heap after GC must be back at
 * their baseline: the run exits with status 1 if any is not.
 *
 * <p>The stub runs in a child JVM by default ({@code -Dstub=child}: the same class with
 * {@code -Dpart=stub}, the same java and class path, driven over its stdin), so that this process
 * holds one socket per stream (the client's) and the stub's CPU is not this process's; with
 * {@code -Dstub=inline} it runs in this JVM (two sockets per stream).
 *
 * <p>System properties: {@code streams} (default 1000), {@code tokenMillis} (200), {@code seconds}
 * (30: each stream's content chunks span this), {@code part} ({@code steady,cut}), {@code sides}
 * ({@code raw,gateway}), {@code bulkhead} (the endpoint's {@code max-concurrent-calls}, which also
 * sizes its connection pool; default {@code streams}), {@code rampMillis} (streams opened evenly
 * over this; default {@code max(1000, streams / 2)}), {@code warmupSeconds} (10, with
 * {@code min(streams, 200)} streams per side first), {@code stub} ({@code child} or
 * {@code inline}), {@code stubLoops} (the stub's event-loop threads, 2), {@code stubJvm} (JVM
 * options of the child, e.g. {@code -Xmx1g}), {@code histogram} (0: with N, the N classes whose live
 * bytes grew most with the streams open, per stream).
 *
 * <p>Timeline of a side, from its first stream: all N open at the end of the ramp; chunks recorded
 * from a second later (or a second after the last one opened, when opening them took longer) to
 * half-way between the ramp's end and the streams' end; then the snapshot with all open (full GC),
 * then, in {@code cut}, the cut. Delays are only comparable between sides of the same run: both
 * include the stub's write and the kernel's loopback, and on a loaded machine the scheduler's
 * delays dominate the tail.
 */
public final class OpenStreams {

	private static final int STREAMS = Integer.getInteger("streams", 1000);

	private static final long TOKEN_MILLIS = Long.getLong("tokenMillis", 200);

	private static final int SECONDS = Integer.getInteger("seconds", 30);

	private static final int BULKHEAD = Integer.getInteger("bulkhead", STREAMS);

	private static final long RAMP_MILLIS = Long.getLong("rampMillis", Math.max(1000, STREAMS / 2));

	private static final int WARMUP_SECONDS = Integer.getInteger("warmupSeconds", 10);

	private static final int STUB_LOOPS = Integer.getInteger("stubLoops", 2);

	private static final int HISTOGRAM = Integer.getInteger("histogram", 0);

	/** A stream's heap, per stream, above which the steady part says so (the target). */
	private static final long HEAP_TARGET = 16 * 1024;

	private OpenStreams() {
	}

	public static void main(String[] args) throws Exception {
		String parts = System.getProperty("part", "steady,cut");
		if (parts.equals("stub")) {
			stub();
			return;
		}
		List<String> sides = List.of(System.getProperty("sides", "raw,gateway").split(","));
		boolean child = !"inline".equals(System.getProperty("stub", "child"));
		Machine.describe("OpenStreams: many streams open at once through one gateway");
		System.out.printf(Locale.ROOT,
				"streams %d, a chunk every %d ms for %d s, opened over %d ms; sides %s, parts %s; stub %s (%d event loops); "
						+ "bulkhead (and pool) %d; open files limit %s; client event loops: reactor.netty.ioWorkerCount=%s%n",
				STREAMS, TOKEN_MILLIS, SECONDS, RAMP_MILLIS, sides, parts, child ? "in a child JVM" : "in this JVM",
				STUB_LOOPS, BULKHEAD, openFilesLimit(), System.getProperty("reactor.netty.ioWorkerCount", "default"));
		int exit = 0;
		try (Stub stub = child ? new ChildStub() : new InlineStub()) {
			System.out.println("endpoint: " + Endpoints.describe(settings(stub.baseUrl())));
			System.out.printf(Locale.ROOT, "warming up: %d streams per side for %d s%n", Math.min(STREAMS, 200),
					WARMUP_SECONDS);
			for (String side : sides) {
				run(stub, side, false, Math.min(STREAMS, 200), WARMUP_SECONDS, 200, true);
			}
			List<Result> results = new ArrayList<>();
			for (String part : parts.split(",")) {
				for (String side : sides) {
					System.out.printf(Locale.ROOT, "%n-- %s, %s (load avg %s)%n", part, side, Machine.loadAverage());
					Result result = run(stub, side, "cut".equals(part), STREAMS, SECONDS, RAMP_MILLIS, false);
					results.add(result);
					if (result.leaks()) {
						exit = 1;
					}
				}
			}
			System.out.println();
			System.out.println("part    side       streams  completed  short  ended in error (by kind)  p50 us   p99 us  p99.9 us   max us   chunks   CPU us/chunk  stub CPU us/chunk  heap B/stream  direct B/stream  fds/stream  leak");
			results.forEach((result) -> System.out.println(result.row()));
			Result raw = find(results, "steady", "raw");
			Result gateway = find(results, "steady", "gateway");
			if (raw != null && gateway != null) {
				System.out.printf(Locale.ROOT,
						"gateway against raw, steady: added p50 %.0f us, added p99 %.0f us, added p99.9 %.0f us; CPU %.1f against %.1f us/chunk; heap %d against %d B/stream%n",
						(gateway.p50 - raw.p50) / 1e3, (gateway.p99 - raw.p99) / 1e3, (gateway.p999 - raw.p999) / 1e3,
						gateway.cpuPerChunk / 1e3, raw.cpuPerChunk / 1e3, gateway.heapPerStream, raw.heapPerStream);
			}
		}
		System.out.println("load avg at end: " + Machine.loadAverage());
		System.exit(exit);
	}

	private static @Nullable Result find(List<Result> results, String part, String side) {
		return results.stream().filter((r) -> r.part.equals(part) && r.side.equals(side)).findFirst().orElse(null);
	}

	/** The endpoint's settings: the built-in defaults but for the bulkhead. */
	private static EndpointSettings settings(String baseUrl) {
		return Endpoints.settings("primary", baseUrl, 1.0, BULKHEAD);
	}

	/**
	 * One side's run: N streams opened over the ramp, recorded while all are open, a snapshot at
	 * half of that, the cut then if asked, the wait for every end, the checks for leaks.
	 */
	private static Result run(Stub stub, String side, boolean cut, int streams, int seconds, long rampMillis,
			boolean quiet) throws Exception {
		PoolWatch poolWatch = new PoolWatch();
		Endpoints endpoints = new Endpoints();
		ConnectionProvider pool;
		Function<String, Flux<String>> open;
		LlmEndpoint endpoint = null;
		if (side.equals("raw")) {
			pool = RawClient.pool("raw", Math.max(streams, BULKHEAD)).mutate().metrics(true, () -> poolWatch).build();
			RawClient raw = new RawClient(stub.baseUrl(), pool);
			open = raw::contents;
		}
		else {
			EndpointSettings settings = settings(stub.baseUrl());
			// The starter's own pool for these settings, only made to report its metrics
			ConnectionProvider library = OpenAiClientFactory.connectionProvider(settings.client());
			pool = library.mutate().metrics(true, () -> poolWatch).build();
			library.dispose();
			endpoint = endpoints.http(settings, pool);
			LlmGateway gateway = Endpoints.gateway(Map.of("default", List.of("primary")), Endpoints.DEFAULT_DEADLINE,
					endpoint);
			open = (prompt) -> gateway.stream(ChatRequest.ofUser(prompt)).map((chunk) -> {
				if (chunk.tier() == Tier.BUSY) {
					throw new BusyAnswer();
				}
				return chunk.content();
			});
		}
		int ticks = (int) (seconds * 1000 / TOKEN_MILLIS);
		String prompt = "ticks=" + ticks;
		long startNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
		long allOpen = startNanos + TimeUnit.MILLISECONDS.toNanos(rampMillis);
		long streamEnd = startNanos + TimeUnit.SECONDS.toNanos(seconds);
		long recordFrom = allOpen + TimeUnit.SECONDS.toNanos(1);
		long middle = allOpen + (streamEnd - allOpen) / 2;
		if (middle <= recordFrom) {
			throw new IllegalArgumentException("seconds " + seconds + " too short for a ramp of " + rampMillis + " ms");
		}
		Tally tally = new Tally(streams, (int) (streams * ((middle - recordFrom) / 1e6 / TOKEN_MILLIS + 2)));
		Snapshot baseline = Snapshot.take(endpoint, poolWatch);
		Map<String, long[]> histogramBefore = (HISTOGRAM > 0 && !quiet) ? histogram() : Map.of();
		long cpuStart;
		long stubCpuStart;
		// open the streams evenly over the ramp
		for (int i = 0; i < streams; i++) {
			long at = startNanos + (rampMillis * 1_000_000L * i) / streams;
			long wait = at - System.nanoTime();
			if (wait > 100_000) {
				LockSupport.parkNanos(wait);
			}
			tally.start(open.apply(prompt), ticks);
		}
		// on a loaded machine opening them may take longer than the ramp: the window then starts later
		long rampDone = System.nanoTime();
		long windowStart = Math.max(recordFrom, rampDone + TimeUnit.SECONDS.toNanos(1));
		long windowEnd = Math.max(middle,
				Math.min(windowStart + (middle - recordFrom), streamEnd - TimeUnit.SECONDS.toNanos(1)));
		if (!quiet) {
			System.out.printf(Locale.ROOT, "opened in %d ms (ramp %d ms); recording from %.1f s to %.1f s after the first%n",
					TimeUnit.NANOSECONDS.toMillis(rampDone - startNanos), rampMillis, (windowStart - startNanos) / 1e9,
					(windowEnd - startNanos) / 1e9);
		}
		sleepUntil(windowStart);
		cpuStart = processCpu();
		stubCpuStart = stub.cpuNanos();
		tally.recording(true);
		sleepUntil(windowEnd);
		tally.recording(false);
		long cpu = processCpu() - cpuStart;
		long stubCpu = stub.cpuNanos() - stubCpuStart;
		long chunks = tally.recorded();
		int openAtMiddle = (int) tally.ended.getCount();
		Snapshot during = Snapshot.take(endpoint, poolWatch);
		int stubOpen = stub.openConnections();
		if (HISTOGRAM > 0 && !quiet) {
			printHistogramGrowth(histogramBefore, histogram(), streams);
		}
		int cutCount = cut ? stub.cut() : 0;
		boolean allEnded = tally.ended.await(seconds + 120, TimeUnit.SECONDS);
		Thread.sleep(1000);
		Snapshot after = settle(baseline, endpoint, poolWatch, stub.socketsHere());
		long[] delays = tally.delays.sorted();
		Result result = new Result(cut ? "cut" : "steady", side, streams, stub.socketsHere(), tally, allEnded,
				LatencyRecorder.percentile(delays, 50), LatencyRecorder.percentile(delays, 99),
				LatencyRecorder.percentile(delays, 99.9), (delays.length > 0) ? delays[delays.length - 1] : 0, chunks,
				(double) cpu / Math.max(1, chunks), (stubCpu < 0) ? -1 : (double) stubCpu / Math.max(1, chunks),
				(during.heap - baseline.heap) / Math.max(1, openAtMiddle),
				(during.direct - baseline.direct) / Math.max(1, openAtMiddle),
				(double) (during.fds - baseline.fds) / Math.max(1, openAtMiddle), baseline, during, after);
		if (!quiet) {
			System.out.printf(Locale.ROOT,
					"at half time: %d of %d streams open here, %d connections open at the stub; %s%n", openAtMiddle,
					streams, stubOpen, during.describe(baseline, Math.max(1, openAtMiddle)));
			if (cut) {
				System.out.printf(Locale.ROOT, "cut: the stub closed %d connections%n", cutCount);
			}
			System.out.printf(Locale.ROOT, "ended: %d completed, %d short, %s; all ended: %s%s%n", tally.completed.sum(),
					tally.shortened.sum(), tally.errorKinds(), allEnded,
					(endpoint != null) ? "; breaker " + endpoint.circuitBreaker().getState() + ", opened by hang evidence "
							+ BenchmarkAccess.hangOpenings(endpoint) + " times" : "");
			System.out.println("baseline: " + baseline);
			System.out.println("after:    " + after);
			if (after.allocated > 0) {
				System.out.printf(Locale.ROOT,
						"the pool keeps %d idle connections (keep-alive): their files are allowed for, the heap not judged (+%.1f MiB)%n",
						after.allocated, (after.heap - baseline.heap) / 1048576.0);
			}
			result.leakReport().forEach((line) -> System.out.println("LEAK: " + line));
			System.out.println(result.row());
		}
		endpoints.close();
		if (side.equals("raw")) {
			pool.dispose();
		}
		System.gc();
		Thread.sleep(500);
		return result;
	}

	/**
	 * The state after every stream ended, once the live threads and the open files (but for the
	 * pool's idle connections) came back to the baseline (plus {@link Snapshot#SLACK}) or 15 s passed.
	 */
	private static Snapshot settle(Snapshot baseline, @Nullable LlmEndpoint endpoint, PoolWatch pool, int sockets)
			throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
		while (true) {
			Snapshot now = Snapshot.take(endpoint, pool);
			if ((now.threads <= baseline.threads + Snapshot.SLACK
					&& now.fds <= baseline.fds + (long) sockets * now.allocated + Snapshot.SLACK
					&& now.acquired == 0) || System.nanoTime() > deadline) {
				return now;
			}
			Thread.sleep(500);
		}
	}

	/** The live objects' class histogram (after a full GC), by class: instances and bytes. */
	private static Map<String, long[]> histogram() {
		Map<String, long[]> classes = new HashMap<>();
		try {
			String text = (String) ManagementFactory.getPlatformMBeanServer()
				.invoke(new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
						new Object[] { new String[0] }, new String[] { String[].class.getName() });
			Pattern row = Pattern.compile("\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+).*");
			text.lines().forEach((line) -> {
				Matcher matcher = row.matcher(line);
				if (matcher.matches()) {
					classes.put(matcher.group(3),
							new long[] { Long.parseLong(matcher.group(1)), Long.parseLong(matcher.group(2)) });
				}
			});
		}
		catch (JMException ex) {
			System.out.println("no class histogram: " + ex);
		}
		return classes;
	}

	/** {@code -Dhistogram=N}: the N classes whose live bytes grew most with the streams open, per stream. */
	private static void printHistogramGrowth(Map<String, long[]> before, Map<String, long[]> during, int streams) {
		System.out.printf(Locale.ROOT, "what the open streams hold (live objects, growth over the baseline, per stream):%n");
		during.entrySet()
			.stream()
			.map((entry) -> {
				long[] was = before.getOrDefault(entry.getKey(), new long[2]);
				return Map.entry(entry.getKey(),
						new long[] { entry.getValue()[0] - was[0], entry.getValue()[1] - was[1] });
			})
			.sorted((a, b) -> Long.compare(b.getValue()[1], a.getValue()[1]))
			.limit(HISTOGRAM)
			.forEach((entry) -> System.out.printf(Locale.ROOT, "  %8.2f objects %8.0f B  %s%n",
					(double) entry.getValue()[0] / streams, (double) entry.getValue()[1] / streams, entry.getKey()));
	}

	private static void sleepUntil(long nanos) throws InterruptedException {
		long wait;
		while ((wait = nanos - System.nanoTime()) > 0) {
			TimeUnit.NANOSECONDS.sleep(wait);
		}
	}

	private static long processCpu() {
		return ((OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
	}

	/** The soft limit on open files, as /proc/self/limits says. */
	private static String openFilesLimit() {
		try (Stream<String> lines = Files.lines(Path.of("/proc/self/limits"))) {
			return lines.filter((line) -> line.startsWith("Max open files"))
				.map((line) -> line.replaceAll("\\s+", " ").replace("Max open files ", ""))
				.findFirst()
				.orElse("unknown");
		}
		catch (IOException ex) {
			return "unknown";
		}
	}

	static long openFiles() {
		try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
			return fds.count();
		}
		catch (IOException ex) {
			return -1;
		}
	}

	/** The stub's side of the child JVM: serve, and answer {@code cut}, {@code open} on stdin. */
	private static void stub() throws IOException {
		PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
		try (TickingStub stub = new TickingStub(Duration.ofMillis(TOKEN_MILLIS), STUB_LOOPS)) {
			out.println("port " + stub.port());
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			String line;
			while ((line = in.readLine()) != null) {
				if (line.equals("cut")) {
					out.println("cut " + stub.cut());
				}
				else if (line.equals("open")) {
					out.println("open " + stub.openConnections());
				}
			}
		}
	}

	/** A gateway's single {@link Tier#BUSY} chunk: no endpoint could start the stream. */
	private static final class BusyAnswer extends RuntimeException {

		BusyAnswer() {
			super("BUSY", null, false, false);
		}

	}

	/** Where the stub runs. */
	private interface Stub extends AutoCloseable {

		String baseUrl();

		int cut() throws IOException;

		int openConnections() throws IOException;

		/** Sockets of this process per connection: 1 (the client's), 2 with the stub in this JVM. */
		int socketsHere();

		/** The stub's own CPU time, or -1 when it is this process's. */
		long cpuNanos();

		@Override
		void close() throws IOException;

	}

	private static final class InlineStub implements Stub {

		private final TickingStub stub = new TickingStub(Duration.ofMillis(TOKEN_MILLIS), STUB_LOOPS);

		@Override
		public String baseUrl() {
			return this.stub.baseUrl();
		}

		@Override
		public int cut() {
			return this.stub.cut();
		}

		@Override
		public int openConnections() {
			return this.stub.openConnections();
		}

		@Override
		public int socketsHere() {
			return 2;
		}

		@Override
		public long cpuNanos() {
			return -1;
		}

		@Override
		public void close() {
			this.stub.close();
		}

	}

	/** The stub in a child JVM: the same java, class path and settings, {@code -Dpart=stub}. */
	private static final class ChildStub implements Stub {

		private final Process process;

		private final BufferedReader replies;

		private final PrintStream commands;

		private final String baseUrl;

		ChildStub() throws IOException {
			String java = ProcessHandle.current().info().command().orElse("java");
			List<String> command = new ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
					"-Dpart=stub", "-DtokenMillis=" + TOKEN_MILLIS, "-DstubLoops=" + STUB_LOOPS));
			String stubJvm = System.getProperty("stubJvm", "");
			if (!stubJvm.isBlank()) {
				command.addAll(1, List.of(stubJvm.trim().split("\\s+")));
			}
			command.add(OpenStreams.class.getName());
			this.process = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
			this.replies = new BufferedReader(new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8));
			this.commands = new PrintStream(this.process.getOutputStream(), true, StandardCharsets.UTF_8);
			this.baseUrl = "http://127.0.0.1:" + reply("port") + "/v1";
			System.out.println("stub: child JVM pid " + this.process.pid() + " (" + String.join(" ", command.subList(0, 1))
					+ " -Dpart=stub " + stubJvm + ")");
		}

		private int reply(String word) throws IOException {
			String line = this.replies.readLine();
			if (line == null || !line.startsWith(word + " ")) {
				throw new IOException("the stub's JVM answered " + line);
			}
			return Integer.parseInt(line.substring(word.length() + 1));
		}

		@Override
		public String baseUrl() {
			return this.baseUrl;
		}

		@Override
		public int cut() throws IOException {
			this.commands.println("cut");
			return reply("cut");
		}

		@Override
		public int openConnections() throws IOException {
			this.commands.println("open");
			return reply("open");
		}

		@Override
		public int socketsHere() {
			return 1;
		}

		@Override
		public long cpuNanos() {
			return this.process.info().totalCpuDuration().map(Duration::toNanos).orElse(-1L);
		}

		@Override
		public void close() throws IOException {
			this.commands.close();
			try {
				if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
					this.process.destroy();
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				this.process.destroy();
			}
		}

	}

	/** The pool's metrics, as Reactor Netty hands them to a registrar (one per remote address). */
	private static final class PoolWatch implements ConnectionProvider.MeterRegistrar {

		private final Map<String, ConnectionPoolMetrics> pools = new ConcurrentHashMap<>();

		@Override
		public void registerMetrics(String poolName, String id, SocketAddress remoteAddress,
				ConnectionPoolMetrics metrics) {
			this.pools.put(id + remoteAddress, metrics);
		}

		int acquired() {
			return this.pools.values().stream().mapToInt(ConnectionPoolMetrics::acquiredSize).sum();
		}

		int allocated() {
			return this.pools.values().stream().mapToInt(ConnectionPoolMetrics::allocatedSize).sum();
		}

		int pending() {
			return this.pools.values().stream().mapToInt(ConnectionPoolMetrics::pendingAcquireSize).sum();
		}

		String limits() {
			return this.pools.values()
				.stream()
				.map((metrics) -> "max " + metrics.maxAllocatedSize() + " connections, " + metrics.maxPendingAcquireSize()
						+ " pending")
				.findFirst()
				.orElse("not used yet");
		}

	}

	/**
	 * What the process holds at one moment: heap after a full GC, Netty's pooled direct memory, live
	 * threads, open files, the pool's connections, the bulkhead's free permits.
	 */
	private record Snapshot(long heap, long direct, int threads, long fds, int acquired, int allocated, int pending,
			int permits, int maxPermits, String poolLimits) {

		/** Threads and files a run may hold above its baseline after it ended (JDK and Reactor housekeeping). */
		static final int SLACK = 2;

		static Snapshot take(@Nullable LlmEndpoint endpoint, PoolWatch pool) {
			for (int i = 0; i < 2; i++) {
				System.gc();
			}
			long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
			long direct = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
			int permits = (endpoint != null) ? endpoint.bulkhead().getMetrics().getAvailableConcurrentCalls() : -1;
			int max = (endpoint != null) ? endpoint.bulkhead().getMetrics().getMaxAllowedConcurrentCalls() : -1;
			return new Snapshot(heap, direct, ManagementFactory.getThreadMXBean().getThreadCount(), openFiles(),
					pool.acquired(), pool.allocated(), pool.pending(), permits, max, pool.limits());
		}

		String describe(Snapshot baseline, int streams) {
			return String.format(Locale.ROOT,
					"heap after GC %.1f MiB (+%.1f MiB, %d B/stream), Netty direct +%.1f MiB, threads %d (+%d), open files %d (+%d), pool %d acquired, %d allocated, %d pending (%s), bulkhead %d of %d free",
					this.heap / 1048576.0, (this.heap - baseline.heap) / 1048576.0, (this.heap - baseline.heap) / streams,
					(this.direct - baseline.direct) / 1048576.0, this.threads, this.threads - baseline.threads, this.fds,
					this.fds - baseline.fds, this.acquired, this.allocated, this.pending, this.poolLimits, this.permits,
					this.maxPermits);
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT,
					"heap after GC %.1f MiB, Netty direct %.1f MiB, threads %d, open files %d, pool %d acquired, %d allocated, %d pending, bulkhead %d of %d free",
					this.heap / 1048576.0, this.direct / 1048576.0, this.threads, this.fds, this.acquired, this.allocated,
					this.pending, this.permits, this.maxPermits);
		}

	}

	/** How the streams went: each one's end, and the delays of the chunks received while recording. */
	private static final class Tally {

		private final CountDownLatch ended;

		private final LatencyRecorder delays;

		private final LongAdder completed = new LongAdder();

		private final LongAdder shortened = new LongAdder();

		private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();

		private final AtomicInteger recorded = new AtomicInteger();

		private volatile boolean recording;

		Tally(int streams, int capacity) {
			this.ended = new CountDownLatch(streams);
			this.delays = new LatencyRecorder(capacity);
		}

		void recording(boolean on) {
			this.recording = on;
		}

		int recorded() {
			return this.recorded.get();
		}

		void start(Flux<String> contents, int ticks) {
			int[] received = new int[1];
			contents.subscribe((content) -> {
				if (content.length() > 1 && content.charAt(0) == 't') {
					long now = System.nanoTime();
					received[0]++;
					if (this.recording) {
						this.delays.record(now - Long.parseLong(content, 1, content.length(), 10));
						this.recorded.incrementAndGet();
					}
				}
			}, (error) -> {
				this.errors.computeIfAbsent(kind(error), (kind) -> new LongAdder()).increment();
				this.ended.countDown();
			}, () -> {
				(received[0] == ticks ? this.completed : this.shortened).increment();
				this.ended.countDown();
			});
		}

		/** An error's kind: its class, and its cause's (no message: it could quote a provider's body). */
		private static String kind(Throwable error) {
			Throwable cause = error.getCause();
			return error.getClass().getSimpleName()
					+ ((cause != null && cause != error) ? "(" + cause.getClass().getSimpleName() + ")" : "");
		}

		long errorCount() {
			return this.errors.values().stream().mapToLong(LongAdder::sum).sum();
		}

		String errorKinds() {
			Map<String, Long> kinds = new TreeMap<>();
			this.errors.forEach((kind, count) -> kinds.put(kind, count.sum()));
			return kinds.isEmpty() ? "no errors" : kinds.toString();
		}

	}

	private record Result(String part, String side, int streams, int sockets, Tally tally, boolean allEnded, long p50, long p99,
			long p999, long max, long chunks, double cpuPerChunk, double stubCpuPerChunk, long heapPerStream,
			long directPerStream, double fdsPerStream, Snapshot baseline, Snapshot during, Snapshot after) {

		/** Heap a run may keep after it ended: 4 MiB or 1 KB per stream, whichever is more. */
		long heapSlack() {
			return Math.max(4L << 20, this.streams * 1024L);
		}

		List<String> leakReport() {
			List<String> leaks = new ArrayList<>();
			if (!this.allEnded) {
				leaks.add(this.tally.ended.getCount() + " streams never ended");
			}
			if (this.after.permits != this.after.maxPermits) {
				leaks.add("bulkhead " + this.after.permits + " of " + this.after.maxPermits + " permits free");
			}
			if (this.after.acquired != 0 || this.after.pending != 0) {
				leaks.add("pool: " + this.after.acquired + " connections acquired, " + this.after.pending + " pending");
			}
			if (this.after.threads > this.baseline.threads + Snapshot.SLACK) {
				leaks.add("threads " + this.after.threads + " against " + this.baseline.threads + " before");
			}
			// the pool's idle connections are kept (keep-alive, no idle timeout): one file each
			if (this.after.fds > this.baseline.fds + (long) this.sockets * this.after.allocated + Snapshot.SLACK) {
				leaks.add("open files " + this.after.fds + " against " + this.baseline.fds + " before and "
						+ this.after.allocated + " idle pooled connections (" + this.sockets + " sockets each here)");
			}
			// idle pooled connections hold heap too (about 3 KB each): judged only once the pool holds none
			if (this.after.allocated == 0 && this.after.heap - this.baseline.heap > heapSlack()) {
				leaks.add(String.format(Locale.ROOT, "heap after GC %.1f MiB against %.1f MiB before",
						this.after.heap / 1048576.0, this.baseline.heap / 1048576.0));
			}
			return leaks;
		}

		boolean leaks() {
			return !leakReport().isEmpty();
		}

		String row() {
			String errors = this.tally.errorCount() + " " + this.tally.errorKinds();
			return String.format(Locale.ROOT,
					"%-7s %-9s %8d %10d %6d  %-26s %7.0f %8.0f %9.0f %8.0f %8d %13.1f %18s %14d %16d %11.2f  %s",
					this.part, this.side, this.streams, this.tally.completed.sum(), this.tally.shortened.sum(), errors,
					this.p50 / 1e3, this.p99 / 1e3, this.p999 / 1e3, this.max / 1e3, this.chunks, this.cpuPerChunk / 1e3,
					(this.stubCpuPerChunk < 0) ? "-" : String.format(Locale.ROOT, "%.1f", this.stubCpuPerChunk / 1e3),
					this.heapPerStream, this.directPerStream, this.fdsPerStream, leaks() ? "LEAK" : "none");
		}

	}

}
