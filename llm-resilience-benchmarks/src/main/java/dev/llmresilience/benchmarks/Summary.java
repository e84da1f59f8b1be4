package dev.llmresilience.benchmarks;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The per-round figures of {@link LoopbackLoad} and {@link PeerComparison} as tab-separated values
 * ({@code -Dsummary=path}), for {@link HeadlineTable} to read instead of their printed lines. One
 * header line, then a {@code load} line when each concurrency's rounds start (the 1-minute load
 * average) and a {@code round} line per side and round: concurrency, round (from 1), the round's
 * order, side, calls, errors, calls/s, p50 and p99 in ns, CPU ns per call of the whole process, and
 * bytes per call of the whole JVM ({@code NaN} where not measured). Without a path, nothing.
 */
final class Summary implements AutoCloseable {

	static final String HEADER = "kind\tconcurrency\tround\torder\tside\tcalls\terrors\tcalls_per_s\tp50_ns\tp99_ns\tcpu_ns_per_call\tbytes_per_call";

	private final @Nullable PrintWriter out;

	private Summary(@Nullable PrintWriter out) {
		this.out = out;
	}

	static Summary open(@Nullable String path) {
		if (path == null || path.isBlank()) {
			return new Summary(null);
		}
		try {
			Path file = Path.of(path);
			if (file.getParent() != null) {
				Files.createDirectories(file.getParent());
			}
			PrintWriter out = new PrintWriter(Files.newBufferedWriter(file, StandardCharsets.UTF_8), true);
			out.println(HEADER);
			return new Summary(out);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot write the summary to " + path, ex);
		}
	}

	/** Names, comma separated, blanks dropped. */
	static List<String> names(String list) {
		return Arrays.stream(list.split(",")).map(String::trim).filter((name) -> !name.isEmpty()).toList();
	}

	/** Concurrencies, comma separated, each at least 1. */
	static int[] concurrencies(String list) {
		int[] values = names(list).stream().mapToInt(Integer::parseInt).toArray();
		if (values.length == 0 || Arrays.stream(values).anyMatch((value) -> value < 1)) {
			throw new IllegalArgumentException("-Dconcurrency must list concurrencies of at least 1, was '" + list + "'");
		}
		return values;
	}

	void load(int concurrency) {
		if (this.out != null) {
			String[] fields = Machine.loadAverage().split(" ");
			this.out.println("load\t" + concurrency + "\t\t\t\t\t\t" + fields[0] + "\t\t\t\t");
		}
	}

	void round(int concurrency, int round, String order, String side, long calls, long errors, double callsPerSecond,
			long p50Nanos, long p99Nanos, double cpuNanosPerCall, double bytesPerCall) {
		if (this.out != null) {
			this.out.printf(Locale.ROOT, "round\t%d\t%d\t%s\t%s\t%d\t%d\t%.1f\t%d\t%d\t%.1f\t%.1f%n", concurrency, round,
					order, side, calls, errors, callsPerSecond, p50Nanos, p99Nanos, cpuNanosPerCall, bytesPerCall);
		}
	}

	void round(int concurrency, int round, String order, String side, long calls, long errors, double callsPerSecond,
			long p50Nanos, long p99Nanos, double cpuNanosPerCall) {
		round(concurrency, round, order, side, calls, errors, callsPerSecond, p50Nanos, p99Nanos, cpuNanosPerCall,
				Double.NaN);
	}

	@Override
	public void close() {
		if (this.out != null) {
			this.out.close();
		}
	}

}
