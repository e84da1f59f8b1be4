package dev.llmresilience.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The one table of {@code llm-resilience-benchmarks/headline.sh}: the figures of its JMH run
 * ({@code -rf json}), its {@link LoopbackLoad} and its {@link PeerComparison} run (their
 * {@code -Dsummary} files), each as the median and the min-max over its passes, with the load
 * average at the start and end of each part. A pass of JMH is a fork (its figure the mean of the
 * fork's iterations); a pass of the other two is a round, in which every side runs once in an
 * order that rotates from round to round, so a ratio or an added p50 is taken within one round.
 *
 * <p>Arguments: the JMH JSON file, the LoopbackLoad summary, the PeerComparison summary, the
 * loads file (lines {@code part<TAB>start|end<TAB>1-minute load}), the Markdown file to write (the
 * table is printed too).
 */
public final class HeadlineTable {

	private static final String GATEWAY_PEER = "llm-resilience gateway";

	private HeadlineTable() {
	}

	public static void main(String[] args) throws IOException {
		if (args.length != 5) {
			throw new IllegalArgumentException("Usage: HeadlineTable <jmh.json> <loopback.tsv> <peers.tsv> <loads.tsv> <table.md>");
		}
		Map<String, String[]> loads = loads(Path.of(args[3]));
		List<String> rows = new ArrayList<>();
		rows.add("| part | figure | median | min-max | passes | target | load at start -> end |");
		rows.add("|---|---|---|---|---|---|---|");
		jmh(Path.of(args[0]), load(loads, "jmh"), rows);
		List<Round> loopback = rounds(Path.of(args[1]));
		String loopLoad = load(loads, "loopback");
		pair(loopback, "gateway-json", "raw", loopLoad, rows);
		pair(loopback, "gateway", "raw-sse", loopLoad, rows);
		List<Round> peers = rounds(Path.of(args[2]));
		String peerLoad = load(loads, "peers");
		List<String> names = peers.stream().map(Round::side).distinct().toList();
		String raw = names.isEmpty() ? "" : names.get(0);
		for (String peer : names) {
			rows.add(row("PeerComparison", "c=1 p50 µs, " + peer, perRound(peers, 1, peer, (own) -> own.p50Nanos() / 1e3),
					"%.1f", "", peerLoad));
		}
		for (String peer : names.subList(Math.min(1, names.size()), names.size())) {
			rows.add(row("PeerComparison", "c=1 added p50 µs, " + peer + " vs " + raw,
					against(peers, 1, peer, raw, (own, base) -> (own.p50Nanos() - base.p50Nanos()) / 1e3), "%+.1f",
					peer.equals(GATEWAY_PEER) ? "<= +15" : "", peerLoad));
		}
		for (String peer : names.subList(Math.min(1, names.size()), names.size())) {
			rows.add(row("PeerComparison", "c=64 calls/s ratio, " + peer + " / " + raw,
					against(peers, 64, peer, raw, (own, base) -> own.callsPerSecond() / base.callsPerSecond()), "%.3f",
					peer.equals(GATEWAY_PEER) ? ">= 0.97" : "", peerLoad));
		}
		String table = String.join("\n", rows) + "\n";
		System.out.print(table);
		Path out = Path.of(args[4]);
		if (out.getParent() != null) {
			Files.createDirectories(out.getParent());
		}
		Files.writeString(out, table, StandardCharsets.UTF_8);
	}

	// JMH: each benchmark's score and allocation per fork, the mean of the fork's iterations
	private static void jmh(Path file, String load, List<String> rows) throws IOException {
		JsonNode results = JsonMapper.builder().build().readTree(Files.readString(file));
		for (JsonNode result : results) {
			String benchmark = result.get("benchmark").asString();
			String name = benchmark.substring(benchmark.lastIndexOf('.', benchmark.lastIndexOf('.') - 1) + 1);
			JsonNode primary = result.get("primaryMetric");
			rows.add(row("JMH", name + " " + primary.get("scoreUnit").asString() + " (mean of each fork)",
					forkMeans(primary.get("rawData")), "%.0f", "", load));
			for (Map.Entry<String, JsonNode> metric : result.get("secondaryMetrics").properties()) {
				if (metric.getKey().endsWith("gc.alloc.rate.norm")) {
					rows.add(row("JMH", name + " B/op (mean of each fork)", forkMeans(metric.getValue().get("rawData")),
							"%.0f", "", load));
				}
			}
		}
	}

	private static double[] forkMeans(JsonNode rawData) {
		List<Double> means = new ArrayList<>();
		for (JsonNode fork : rawData) {
			double sum = 0;
			for (JsonNode iteration : fork) {
				sum += iteration.asDouble();
			}
			means.add(sum / Math.max(1, fork.size()));
		}
		return means.stream().mapToDouble(Double::doubleValue).toArray();
	}

	// LoopbackLoad: a gateway side against the raw side doing its wire work, round by round
	private static void pair(List<Round> rounds, String side, String raw, String load, List<String> rows) {
		rows.add(row("LoopbackLoad", "c=1 added p50 µs, " + side + " vs " + raw,
				against(rounds, 1, side, raw, (own, base) -> (own.p50Nanos() - base.p50Nanos()) / 1e3), "%+.1f", "<= +15",
				load));
		rows.add(row("LoopbackLoad", "c=64 calls/s ratio, " + side + " / " + raw,
				against(rounds, 64, side, raw, (own, base) -> own.callsPerSecond() / base.callsPerSecond()), "%.3f",
				">= 0.97", load));
	}

	private static double[] perRound(List<Round> rounds, int concurrency, String side, ToDoubleFunction<Round> figure) {
		return rounds.stream()
			.filter((round) -> round.concurrency() == concurrency && round.side().equals(side))
			.mapToDouble(figure)
			.toArray();
	}

	private static double[] against(List<Round> rounds, int concurrency, String side, String base, Pairwise figure) {
		Map<Integer, Round> bases = new LinkedHashMap<>();
		rounds.stream()
			.filter((round) -> round.concurrency() == concurrency && round.side().equals(base))
			.forEach((round) -> bases.put(round.round(), round));
		return rounds.stream()
			.filter((round) -> round.concurrency() == concurrency && round.side().equals(side)
					&& bases.containsKey(round.round()))
			.mapToDouble((round) -> figure.of(round, bases.get(round.round())))
			.toArray();
	}

	private static String row(String part, String figure, double[] values, String format, String target, String load) {
		if (values.length == 0) {
			return "| " + part + " | " + figure + " | - | - | 0 | " + target + " | " + load + " |";
		}
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		int middle = sorted.length / 2;
		double median = (sorted.length % 2 == 1) ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
		String met = "";
		if (target.startsWith("<=")) {
			met = (median <= Double.parseDouble(target.substring(2).trim())) ? " (met)" : " (missed)";
		}
		else if (target.startsWith(">=")) {
			met = (median >= Double.parseDouble(target.substring(2).trim())) ? " (met)" : " (missed)";
		}
		return String.format(Locale.ROOT, "| %s | %s | " + format + " | " + format + " to " + format + " | %d | %s | %s |",
				part, figure, median, sorted[0], sorted[sorted.length - 1], sorted.length, target + met, load);
	}

	private static List<Round> rounds(Path file) throws IOException {
		List<Round> rounds = new ArrayList<>();
		for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
			String[] fields = line.split("\t", -1);
			if (fields[0].equals("round")) {
				rounds.add(new Round(Integer.parseInt(fields[1]), Integer.parseInt(fields[2]), fields[4],
						Double.parseDouble(fields[7]), Long.parseLong(fields[8])));
			}
		}
		return rounds;
	}

	private static Map<String, String[]> loads(Path file) throws IOException {
		Map<String, String[]> loads = new LinkedHashMap<>();
		for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
			String[] fields = line.split("\t");
			if (fields.length == 3) {
				String[] pair = loads.computeIfAbsent(fields[0], (part) -> new String[] { "?", "?" });
				pair[fields[1].equals("start") ? 0 : 1] = fields[2];
			}
		}
		return loads;
	}

	private static String load(Map<String, String[]> loads, String part) {
		String[] pair = loads.getOrDefault(part, new String[] { "?", "?" });
		return pair[0] + " -> " + pair[1];
	}

	private interface Pairwise {

		double of(Round own, Round base);

	}

	private record Round(int concurrency, int round, String side, double callsPerSecond, long p50Nanos) {
	}

}
