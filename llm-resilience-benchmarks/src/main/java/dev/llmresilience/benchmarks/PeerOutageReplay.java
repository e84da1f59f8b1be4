package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

import dev.llmresilience.benchmarks.Peers.Peer;

/**
 * Question (b) of the peer comparison: OutageReplay's outage (a primary that hangs, or answers 500, for the
 * outage window, then recovers; a healthy backup; open-loop traffic before, during and after)
 * through each peer, each with a fallback to the backup where its API gives one. Its own class, so
 * that OutageReplay's gateway-only scenarios stay as they are; the same servers' rules
 * ({@link StubProvider.Outage}) and the same shape of traffic, at {@code scale} (default 1/10, so
 * that the peers' own retry back-offs, which cannot be scaled, weigh less: see BENCHMARKS.md).
 * Figures for the requests of the outage window: the calls the primary received while down, the
 * waits' mean and p99 (rescaled to real time), and the share answered (by either endpoint).
 *
 * <p>System properties: {@code scale} (default 0.1), {@code modes} (hang,500), {@code peers}
 * (names, comma separated, default all), {@code requests} (in the outage window, default 1320).
 */
public final class PeerOutageReplay {

	private PeerOutageReplay() {
	}

	public static void main(String[] args) throws Exception {
		double scale = Double.parseDouble(System.getProperty("scale", "0.1"));
		int outageRequests = Integer.getInteger("requests", 1320);
		String only = System.getProperty("peers", "");
		String modes = System.getProperty("modes", "hang,500");
		Duration outage = Endpoints.scaled(Duration.ofSeconds(660), scale);
		long interval = outage.toNanos() / outageRequests;
		int before = (int) (Endpoints.scaled(Duration.ofSeconds(100), scale).toNanos() / interval);
		int after = (int) (Endpoints.scaled(Duration.ofSeconds(200), scale).toNanos() / interval);
		Duration latency = Endpoints.scaled(Duration.ofMillis(800), scale);
		Machine.describe("PeerOutageReplay: the 11-minute outage through each peer");
		System.out.printf(Locale.ROOT, "scale %s: outage %s with %d requests (one every %.2f ms), %d before, %d after; "
				+ "answers take %s%n", scale, outage, outageRequests, interval / 1e6, before, after, latency);
		System.out.println("| mode | peer | primary calls while down | mean wait | p99 wait | answered |");
		System.out.println("|---|---|---|---|---|---|");
		String[] names = { "raw WebClient, timeout and retry", "Resilience4j by hand", "Spring AI OpenAiChatModel",
				"LangChain4j OpenAiChatModel", "llm-resilience gateway" };
		for (String mode : modes.split(",")) {
			StubProvider.FailureMode failure = "hang".equals(mode) ? StubProvider.FailureMode.HANG
					: StubProvider.FailureMode.HTTP_500;
			for (int p = 0; p < names.length; p++) {
				if (!only.isEmpty() && !only.contains(names[p])) {
					continue;
				}
				try (PeerServer primary = new PeerServer("primary", latency::toNanos, failure);
						PeerServer backup = new PeerServer("backup", latency::toNanos, failure);
						Peers peers = new Peers(scale)) {
					Peer peer = switch (p) {
						case 0 -> peers.raw(primary.baseUrl(), true);
						case 1 -> peers.resilience4j(primary.baseUrl(), backup.baseUrl());
						case 2 -> peers.springAi(primary.baseUrl(), backup.baseUrl());
						case 3 -> peers.langChain4j(primary.baseUrl(), backup.baseUrl());
						default -> peers.gateway(names[p], primary.baseUrl(), backup.baseUrl(), null);
					};
					OpenLoop.run(peer, 200, interval, 30);
					long start = System.nanoTime() + Duration.ofMillis(20).toNanos();
					long outageStart = start + before * interval;
					primary.outage(new StubProvider.Outage(outageStart, outageStart + outageRequests * interval));
					OpenLoop.Result result = OpenLoop.run(peer, before + outageRequests + after, interval,
							Math.max(60, (long) (1200 * scale)));
					print(mode, names[p], result, primary, before, outageRequests, scale);
				}
			}
		}
		System.out.println("load avg at end: " + Machine.loadAverage());
		System.exit(0);
	}

	private static void print(String mode, String name, OpenLoop.Result result, PeerServer primary, int before,
			int outageRequests, double scale) {
		long[] waits = Arrays.copyOfRange(result.waits(), before, before + outageRequests);
		long answered = 0;
		for (int i = before; i < before + outageRequests; i++) {
			answered += result.answered()[i] ? 1 : 0;
		}
		Arrays.sort(waits);
		System.out.printf(Locale.ROOT, "| %s | %s | %d | %s | %s | %d of %d (%.1f %%)%s |%n", mode, name,
				primary.receivedInOutage(), real(LatencyRecorder.mean(waits), scale),
				real(LatencyRecorder.percentile(waits, 99), scale), answered, outageRequests,
				100.0 * answered / outageRequests, result.finished() ? "" : ", some never ended");
	}

	private static String real(double nanos, double scale) {
		double seconds = nanos / 1e9 / scale;
		return (seconds < 1) ? String.format(Locale.ROOT, "%.0f ms", seconds * 1000)
				: String.format(Locale.ROOT, "%.1f s", seconds);
	}

}
