package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;

import dev.llmresilience.benchmarks.Peers.Peer;
import dev.llmresilience.engine.BenchmarkAccess;

/**
 * Question (c) of the peer comparison: a straggler provider, whose time to first token is log-normal with a
 * median of 0.8 s and a 99th percentile of 15 s (sigma 1.26), scaled by {@code scale} (default
 * 1/10: 80 ms and 1.5 s), behind two endpoints that straggle independently. Open-loop traffic
 * goes through each peer, then through the gateway without and with hedging (adaptive at the
 * endpoint's p95, at most 10 % of calls, the built-in hedge defaults scaled); the waits' p50, p99
 * and p99.9, and the upstream calls and tokens the providers saw beyond one call per request.
 * Tokens: every request a provider received is billed its prompt tokens, every answer it sent
 * whole its completion tokens too (a hedge's loser is cut before any).
 *
 * <p>System properties: {@code scale} (default 0.1), {@code requests} (default 2000),
 * {@code rate} (per second, default 50), {@code peers} (names, comma separated, default all),
 * {@code seed} (default 15).
 *
 * <p>With {@code prompts=mixed}, the prompts are of many sizes and the first token depends on the
 * size, as prefill does: sizes log-uniform from 50 to 20,000 characters, and a first token of
 * {@code prefill(size)} times a narrow log-normal noise ({@code sigma}, default 0.3), drawn
 * independently by each endpoint for the same size, calibrated so that over all prompts the median is
 * 0.8 s and the p99 15 s. With {@code stragglers} above 0 (default 0), that share of requests is
 * also a straggler on the endpoint it reaches (a further factor, log-normal with sigma 0.5, drawn
 * independently per endpoint), and the prefill grows as size to the power {@code slope} (default
 * 0.3); the factor is then calibrated to the same median and p99. The gateway runs without hedging,
 * hedging per endpoint, and hedging per endpoint and prompt size; see {@link MixedPrompts}.
 */
public final class StragglerReplay {

	private static final double MEDIAN_SECONDS = 0.8;

	private static final double SIGMA = Math.log(15 / MEDIAN_SECONDS) / 2.3263;

	private StragglerReplay() {
	}

	public static void main(String[] args) throws Exception {
		double scale = Double.parseDouble(System.getProperty("scale", "0.1"));
		int requests = Integer.getInteger("requests", 2000);
		double rate = Double.parseDouble(System.getProperty("rate", "50"));
		String only = System.getProperty("peers", "");
		long seed = Long.getLong("seed", 15);
		if ("mixed".equals(System.getProperty("prompts", "same"))) {
			MixedPrompts.run(scale, requests, rate, seed);
			System.exit(0);
		}
		Machine.describe("StragglerReplay: log-normal first token, p50 0.8 s, p99 15 s, scaled");
		System.out.printf(Locale.ROOT, "scale %s, sigma %.3f, %d requests at %.0f/s, seed %d%n", scale, SIGMA, requests,
				rate, seed);
		BenchmarkAccess.Hedge hedge = new BenchmarkAccess.Hedge(true, 95, Endpoints.scaled(Duration.ofSeconds(2), scale),
				Endpoints.scaled(Duration.ofMillis(100), scale), 0.1, Duration.ofMinutes(1), false);
		System.out.println("| peer | answered | p50 | p99 | p99.9 | max | upstream calls per request | extra calls | extra tokens | calls the peer never ended |");
		System.out.println("|---|---|---|---|---|---|---|---|---|---|");
		String[] names = { "raw WebClient", "Resilience4j by hand", "Spring AI OpenAiChatModel",
				"LangChain4j OpenAiChatModel", "gateway, no hedging", "gateway, hedging (adaptive p95, 10 %)" };
		for (int p = 0; p < names.length; p++) {
			if (!only.isEmpty() && !only.contains(names[p])) {
				continue;
			}
			try (PeerServer primary = new PeerServer("primary", straggler(scale, seed), StubProvider.FailureMode.HANG);
					PeerServer backup = new PeerServer("backup", straggler(scale, seed + 1), StubProvider.FailureMode.HANG);
					Peers peers = new Peers(scale)) {
				Peer peer = switch (p) {
					case 0 -> peers.raw(primary.baseUrl(), false);
					case 1 -> peers.resilience4j(primary.baseUrl(), backup.baseUrl());
					case 2 -> peers.springAi(primary.baseUrl(), backup.baseUrl());
					case 3 -> peers.langChain4j(primary.baseUrl(), backup.baseUrl());
					case 4 -> peers.gateway(names[p], primary.baseUrl(), backup.baseUrl(), null);
					default -> peers.gateway(names[p], primary.baseUrl(), backup.baseUrl(), hedge);
				};
				long interval = (long) (1e9 / rate);
				// warm-up: compiled code, and first-token times for an adaptive delay
				OpenLoop.run(peer, Math.min(300, requests), interval, 30);
				primary.reset();
				backup.reset();
				OpenLoop.Result result = OpenLoop.run(peer, requests, interval, 60);
				print(names[p], result, primary, backup, requests, scale);
			}
		}
		System.out.println("load avg at end: " + Machine.loadAverage());
		System.exit(0);
	}

	private static void print(String name, OpenLoop.Result result, PeerServer primary, PeerServer backup, int requests,
			double scale) {
		long[] waits = result.waits().clone();
		Arrays.sort(waits);
		long calls = primary.received() + backup.received();
		long tokens = calls * PeerServer.PROMPT_TOKENS
				+ (primary.answered() + backup.answered()) * (long) PeerServer.COMPLETION_TOKENS;
		long tokensOnce = (long) requests * (PeerServer.PROMPT_TOKENS + PeerServer.COMPLETION_TOKENS);
		System.out.printf(Locale.ROOT, "| %s | %.1f %% | %s | %s | %s | %s | %.3f | %+.1f %% | %+.1f %% | %s |%n", name,
				100.0 * result.answeredCount() / requests, real(LatencyRecorder.percentile(waits, 50), scale),
				real(LatencyRecorder.percentile(waits, 99), scale), real(LatencyRecorder.percentile(waits, 99.9), scale),
				real(waits[waits.length - 1], scale), (double) calls / requests, 100.0 * (calls - requests) / requests,
				100.0 * (tokens - tokensOnce) / tokensOnce, result.finished() ? "0" : "some");
	}

	/** Log-normal delays: median 0.8 s and p99 15 s, times the scale. */
	static LongSupplier straggler(double scale, long seed) {
		return logNormal(MEDIAN_SECONDS, SIGMA, scale, seed);
	}

	/**
	 * Log-normal delays, in nanoseconds.
	 * @param medianSeconds their median, in real seconds
	 * @param sigma the spread of their logarithm ({@code ln(p99 / median) / 2.3263})
	 * @param scale the time scale they are multiplied by
	 * @param seed the random sequence's seed
	 * @return the delays, drawn one per call
	 */
	static LongSupplier logNormal(double medianSeconds, double sigma, double scale, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		return () -> {
			synchronized (random) {
				double gaussian = gaussian(random);
				return (long) (medianSeconds * Math.exp(sigma * gaussian) * scale * 1e9);
			}
		};
	}

	/** A standard normal draw. */
	static double gaussian(SplittableRandom random) {
		// Box-Muller: SplittableRandom has no nextGaussian on Java 17
		double u = 1.0 - random.nextDouble();
		double v = random.nextDouble();
		return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
	}

	// as it would be in real time, then as measured
	private static String real(long nanos, double scale) {
		return String.format(Locale.ROOT, "%.2f s (%.1f ms)", nanos / 1e9 / scale, nanos / 1e6);
	}

}
