package dev.llmresilience.benchmarks;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedMethod;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a recording's CPU samples fall ({@code jdk.ExecutionSample} of a JFR file): the top
 * frames by self samples, the classes of {@code dev.llmresilience} by inclusive samples (a sample
 * counts once per class on its stack), and the share of each library by the top frame's package.
 * With the calls made while recording, it turns samples into microseconds per call (samples times
 * the sampling period over the calls), so that two recordings of one load, say {@link LoopbackLoad}'s
 * {@code raw} and {@code gateway-json} sides at concurrency 1, can be set side by side.
 *
 * <p>When the recording holds {@link RoundEvent}s ({@link LoopbackLoad} under JFR), the samples
 * are split by the side whose round they fall in (rounds that began before the recording are left
 * out), calls come from the rounds, and each gateway side is then set against the raw side doing its wire
 * work ({@code gateway-json} against {@code raw}, {@code gateway} against {@code raw-sse}; else
 * each side against the first) by library, thread and self frame, in microseconds per call.
 *
 * <p>Arguments: the JFR file, the sampling period in ms (as recorded, e.g. 1 with
 * {@code jdk.ExecutionSample#period=1ms}), the calls made while recording (0 for shares only;
 * ignored when there are rounds), the number of rows of each list (default 25).
 */
public final class ProfileFrames {

	private static final List<String> LIBRARIES = List.of("dev.llmresilience.benchmarks", "dev.llmresilience",
			"reactor.netty", "reactor.core", "io.netty", "tools.jackson", "com.fasterxml", "org.springframework",
			"io.github.resilience4j", "io.micrometer", "sun.nio", "java.", "jdk.", "sun.");

	private ProfileFrames() {
	}

	public static void main(String[] args) throws IOException {
		Path file = Path.of(args[0]);
		double periodMillis = Double.parseDouble(args[1]);
		long calls = (args.length > 2) ? Long.parseLong(args[2]) : 0;
		int top = (args.length > 3) ? Integer.parseInt(args[3]) : 25;
		List<RecordedEvent> events = RecordingFile.readAllEvents(file);
		List<RecordedEvent> samples = events.stream()
			.filter((event) -> event.getEventType().getName().equals("jdk.ExecutionSample"))
			.filter((event) -> event.getStackTrace() != null && !event.getStackTrace().getFrames().isEmpty())
			.toList();
		Instant first = samples.stream().map(RecordedEvent::getStartTime).min(Instant::compareTo).orElse(Instant.MAX);
		// the rounds wholly inside the recording
		List<RecordedEvent> rounds = events.stream()
			.filter((event) -> event.getEventType().getName().equals("dev.llmresilience.benchmarks.Round"))
			.filter((event) -> !event.getStartTime().isBefore(first))
			.toList();
		Map<String, Group> groups = new LinkedHashMap<>();
		if (rounds.isEmpty()) {
			Group all = groups.computeIfAbsent("all", Group::new);
			all.calls = calls;
			samples.forEach(all::add);
		}
		else {
			for (RecordedEvent round : rounds) {
				String name = round.getString("side") + " c=" + round.getInt("concurrency");
				groups.computeIfAbsent(name, Group::new).calls += round.getLong("calls");
			}
			for (RecordedEvent sample : samples) {
				for (RecordedEvent round : rounds) {
					if (!sample.getStartTime().isBefore(round.getStartTime())
							&& sample.getStartTime().isBefore(round.getEndTime())) {
						groups.get(round.getString("side") + " c=" + round.getInt("concurrency")).add(sample);
						break;
					}
				}
			}
		}
		for (Group group : groups.values()) {
			System.out.printf(Locale.ROOT, "%n== %s: %s, %d samples, period %.1f ms, %d calls%s%n", file, group.name,
					group.samples, periodMillis, group.calls, (group.calls > 0) ? String.format(Locale.ROOT,
							": %.2f us of samples per call", group.samples * periodMillis * 1000 / group.calls) : "");
			print("by thread (digits dropped)", group.threads, group, periodMillis, top);
			print("by library (top frame)", group.libraries, group, periodMillis, top);
			print("by the innermost frame of dev.llmresilience (the method whose own work or callees the sample is)",
					group.innermost, group, periodMillis, top);
			print("top frames, self", group.self, group, periodMillis, top);
			print("dev.llmresilience classes, inclusive", group.ownInclusive, group, periodMillis, top);
			print("dev.llmresilience methods, inclusive", group.ownMethods, group, periodMillis, top);
		}
		// LoopbackLoad's like-for-like pairs where both sides are there, else each side against the first
		List<Group[]> pairs = new ArrayList<>();
		for (Group group : groups.values()) {
			String concurrency = group.name.substring(group.name.indexOf(' '));
			Group base = groups.get((group.name.startsWith("gateway-json ") ? "raw" : group.name.startsWith("gateway ")
					? "raw-sse" : "") + concurrency);
			if (base != null) {
				pairs.add(new Group[] { group, base });
			}
		}
		if (pairs.isEmpty() && groups.size() >= 2) {
			List<Group> sides = new ArrayList<>(groups.values());
			sides.subList(1, sides.size()).forEach((other) -> pairs.add(new Group[] { other, sides.get(0) }));
		}
		for (Group[] pair : pairs) {
			Group other = pair[0];
			Group base = pair[1];
			System.out.printf(Locale.ROOT, "%n== %s minus %s, us of samples per call: %.2f - %.2f = %+.2f%n", other.name,
					base.name, other.perCall(other.samples, periodMillis), base.perCall(base.samples, periodMillis),
					other.perCall(other.samples, periodMillis) - base.perCall(base.samples, periodMillis));
			difference("by thread", other.threads, base.threads, other, base, periodMillis, top);
			difference("by library (top frame)", other.libraries, base.libraries, other, base, periodMillis, top);
			difference("top frames, self", other.self, base.self, other, base, periodMillis, top);
		}
	}

	private static void difference(String title, Map<String, Long> counts, Map<String, Long> baseCounts, Group group,
			Group base, double periodMillis, int top) {
		System.out.println();
		System.out.println("-- difference " + title + " (us/call, largest first)");
		Set<String> keys = new HashSet<>(counts.keySet());
		keys.addAll(baseCounts.keySet());
		keys.stream()
			.map((key) -> Map.entry(key, group.perCall(counts.getOrDefault(key, 0L), periodMillis)
					- base.perCall(baseCounts.getOrDefault(key, 0L), periodMillis)))
			.sorted(Map.Entry.<String, Double>comparingByValue().reversed())
			.limit(top)
			.forEach((entry) -> System.out.printf(Locale.ROOT, "%+8.2f  %s%n", entry.getValue(), entry.getKey()));
	}

	private static void print(String title, Map<String, Long> counts, Group group, double periodMillis, int top) {
		long samples = group.samples;
		long calls = group.calls;
		System.out.println();
		System.out.println("-- " + title);
		counts.entrySet()
			.stream()
			.sorted(Map.Entry.<String, Long>comparingByValue().reversed())
			.limit(top)
			.forEach((entry) -> System.out.printf(Locale.ROOT, "%7d %5.1f %%%s  %s%n", entry.getValue(),
					100.0 * entry.getValue() / Math.max(1, samples),
					(calls > 0) ? String.format(Locale.ROOT, " %7.2f us/call", entry.getValue() * periodMillis * 1000 / calls)
							: "",
					entry.getKey()));
	}

	private static String thread(RecordedEvent event) {
		Object thread = event.getValue("sampledThread");
		String name = (thread instanceof jdk.jfr.consumer.RecordedThread recorded) ? recorded.getJavaName() : null;
		return (name != null) ? name.replaceAll("[0-9]+", "#") : "?";
	}

	// the innermost frame of our code (the benchmarks' own included), else the top frame's library
	private static String innermost(List<RecordedFrame> frames) {
		for (RecordedFrame frame : frames) {
			if (frame.getMethod().getType().getName().startsWith("dev.llmresilience.")) {
				return name(frame.getMethod());
			}
		}
		return "(none of ours; top frame in " + library(frames.get(0).getMethod().getType().getName()) + ")";
	}

	/** The samples of one side (or of the whole recording), counted several ways. */
	private static final class Group {

		final String name;

		long calls;

		long samples;

		final Map<String, Long> self = new HashMap<>();

		final Map<String, Long> ownInclusive = new HashMap<>();

		final Map<String, Long> ownMethods = new HashMap<>();

		final Map<String, Long> libraries = new HashMap<>();

		final Map<String, Long> threads = new HashMap<>();

		final Map<String, Long> innermost = new HashMap<>();

		Group(String name) {
			this.name = name;
		}

		double perCall(long count, double periodMillis) {
			return count * periodMillis * 1000 / Math.max(1, this.calls);
		}

		void add(RecordedEvent event) {
			this.samples++;
			List<RecordedFrame> frames = event.getStackTrace().getFrames();
			RecordedMethod leaf = frames.get(0).getMethod();
			this.self.merge(name(leaf), 1L, Long::sum);
			this.libraries.merge(library(leaf.getType().getName()), 1L, Long::sum);
			this.threads.merge(thread(event), 1L, Long::sum);
			this.innermost.merge(innermost(frames), 1L, Long::sum);
			Set<String> classes = new HashSet<>();
			Set<String> methods = new HashSet<>();
			for (RecordedFrame frame : frames) {
				String type = frame.getMethod().getType().getName();
				if (type.startsWith("dev.llmresilience.") && !type.startsWith("dev.llmresilience.benchmarks.")) {
					String outer = (type.indexOf('$') > 0) ? type.substring(0, type.indexOf('$')) : type;
					classes.add(outer);
					methods.add(name(frame.getMethod()));
				}
			}
			classes.forEach((type) -> this.ownInclusive.merge(type, 1L, Long::sum));
			methods.forEach((method) -> this.ownMethods.merge(method, 1L, Long::sum));
		}

	}

	private static String name(RecordedMethod method) {
		return method.getType().getName() + "." + method.getName();
	}

	private static String library(String type) {
		for (String library : LIBRARIES) {
			if (type.startsWith(library)) {
				return library;
			}
		}
		return type.contains(".") ? type.substring(0, type.lastIndexOf('.')) : type;
	}

}
