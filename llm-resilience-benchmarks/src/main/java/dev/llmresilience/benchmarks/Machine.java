package dev.llmresilience.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Arrays;
import java.util.stream.Stream;

/**
 * What each run prints about the machine it ran on, so that BENCHMARKS.md can quote it: CPUs, CPU
 * model, memory, JDK, heap, date, and the load average (other builds may share the machine).
 */
final class Machine {

	private Machine() {
	}

	static void describe(String benchmark) {
		Runtime runtime = Runtime.getRuntime();
		System.out.println("== " + benchmark);
		System.out.println("date:      " + ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME));
		System.out.println("cpus:      " + runtime.availableProcessors() + " (" + cpuModel() + ")");
		System.out.println("memory:    " + memTotal());
		System.out.println("jdk:       " + System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
		System.out.println("max heap:  " + runtime.maxMemory() / (1024 * 1024) + " MiB");
		System.out.println("load avg:  " + loadAverage());
	}

	static String loadAverage() {
		String[] fields = read("/proc/loadavg").trim().split("\\s+");
		return (fields.length >= 3) ? String.join(" ", Arrays.copyOf(fields, 3)) + " (1, 5, 15 min)" : "unknown";
	}

	private static String cpuModel() {
		return lines("/proc/cpuinfo").filter((line) -> line.startsWith("model name"))
			.map((line) -> line.substring(line.indexOf(':') + 1).trim())
			.findFirst()
			.orElse("unknown");
	}

	private static String memTotal() {
		return lines("/proc/meminfo").filter((line) -> line.startsWith("MemTotal"))
			.map((line) -> line.replaceAll("\\s+", " "))
			.findFirst()
			.orElse("unknown");
	}

	private static Stream<String> lines(String file) {
		return read(file).lines();
	}

	private static String read(String file) {
		try {
			return Files.readString(Path.of(file));
		}
		catch (IOException ex) {
			return "";
		}
	}

}
