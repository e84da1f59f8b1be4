package dev.llmresilience.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.function.ToLongFunction;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.BenchmarkAccess;
import dev.llmresilience.gateway.LlmGateway;

/**
 * The {@code prompts=mixed} mode of {@link StragglerReplay}: prompts of sizes log-uniform from 50
 * to 20,000 characters, whose first token is {@code prefill(size)} times a narrow log-normal noise
 * (and, with {@code stragglers}, a rare independent straggle), calibrated to a median of 0.8 s and
 * a p99 of 15 s over all prompts. Each request's prompt starts with its size, which the servers read
 * to draw its delay: the same prompt is as long on both endpoints, each draws its own noise.
 * {@code firstTokenTimeout} (real seconds, default the built-in 10) sets the endpoints' one.
 */
final class MixedPrompts {

	private static final double MIN_CHARS = 50;

	private static final double MAX_CHARS = 20_000;

	private static final double LOW = Math.log(MIN_CHARS);

	private static final double HIGH = Math.log(MAX_CHARS);

	private static final double MID = (LOW + HIGH) / 2;

	private static final double STRAGGLE_SIGMA = 0.5;

	private static final byte[] CONTENT = "\"content\":\"".getBytes(StandardCharsets.US_ASCII);

	private MixedPrompts() {
	}

	/**
	 * The first-token model: {@code exp(intercept + slope (ln size - mid) + sigma Z)} seconds, times
	 * {@code exp(ln factor + 0.5 Z')} for a straggler (a share {@code stragglers} of requests).
	 */
	record Model(double intercept, double slope, double sigma, double stragglers, double factor) {

		double seconds(double lnSize, SplittableRandom random) {
			double log = this.intercept + this.slope * (lnSize - MID) + this.sigma * StragglerReplay.gaussian(random);
			if (this.stragglers > 0 && random.nextDouble() < this.stragglers) {
				log += Math.log(this.factor) + STRAGGLE_SIGMA * StragglerReplay.gaussian(random);
			}
			return Math.exp(log);
		}

		// the model's median and p99 over all prompt sizes, by drawing
		double[] percentiles(long seed) {
			SplittableRandom random = new SplittableRandom(seed);
			double[] draws = new double[200_000];
			for (int i = 0; i < draws.length; i++) {
				draws[i] = seconds(LOW + (HIGH - LOW) * random.nextDouble(), random);
			}
			Arrays.sort(draws);
			return new double[] { draws[draws.length / 2], draws[(int) (draws.length * 0.99)] };
		}

		/**
		 * Calibrate to a median of 0.8 s and a p99 of 15 s: without stragglers by the slope, with them
		 * by the straggle factor (the slope given).
		 */
		static Model calibrated(double sigma, double stragglers, double slope) {
			Model model = new Model(Math.log(0.8), (stragglers > 0) ? slope : 0.5, sigma, stragglers, 10);
			for (int i = 0; i < 40; i++) {
				double[] p = model.percentiles(42);
				double intercept = model.intercept + Math.log(0.8 / p[0]);
				double ratio = Math.log(15 / 0.8) / Math.log(p[1] / p[0]);
				if (stragglers > 0) {
					model = new Model(intercept, model.slope, sigma, stragglers, model.factor * Math.pow(15 / p[1], 0.7));
				}
				else {
					model = new Model(intercept, model.slope * Math.pow(ratio, 0.7), sigma, 0, model.factor);
				}
			}
			return model;
		}

	}

	static void run(double scale, int requests, double rate, long seed) throws Exception {
		double sigma = Double.parseDouble(System.getProperty("sigma", "0.3"));
		double stragglers = Double.parseDouble(System.getProperty("stragglers", "0"));
		double slope = Double.parseDouble(System.getProperty("slope", "0.3"));
		double firstTokenTimeout = Double.parseDouble(System.getProperty("firstTokenTimeout", "10"));
		Model model = Model.calibrated(sigma, stragglers, slope);
		double[] p = model.percentiles(7);
		System.out.printf(Locale.ROOT,
				"mixed prompts: sizes log-uniform %.0f-%.0f chars; first token exp(%.3f + %.3f (ln size - %.2f) + %.2f Z) s"
						+ " (a 50-char prompt %.2f s, 1K %.2f s, 20K %.2f s at the median noise)%s; model p50 %.2f s, p99 %.2f s%n",
				MIN_CHARS, MAX_CHARS, model.intercept(), model.slope(), MID, model.sigma(), median(model, MIN_CHARS),
				median(model, 1000), median(model, MAX_CHARS),
				(stragglers > 0) ? String.format(Locale.ROOT, "; stragglers %.1f %% x exp(ln %.1f + %.1f Z')",
						100 * stragglers, model.factor(), STRAGGLE_SIGMA) : "",
				p[0], p[1]);
		System.out.printf(Locale.ROOT, "first-token-timeout %.0f s (the built-in one is 10 s), %d requests at %.0f/s, scale %s, seed %d%n",
				firstTokenTimeout, requests, rate, scale, seed);
		int warmup = Math.min(300, requests);
		int[] sizes = new int[warmup + requests];
		SplittableRandom sizeRandom = new SplittableRandom(seed + 2);
		for (int i = 0; i < sizes.length; i++) {
			sizes[i] = (int) Math.round(Math.exp(LOW + (HIGH - LOW) * sizeRandom.nextDouble()));
		}
		ChatRequest[] prompts = new ChatRequest[sizes.length];
		for (int i = 0; i < sizes.length; i++) {
			prompts[i] = ChatRequest.ofUser(prompt(sizes[i]));
		}
		Duration delay = Endpoints.scaled(Duration.ofSeconds(2), scale);
		Duration minDelay = Endpoints.scaled(Duration.ofMillis(100), scale);
		String[] names = { "gateway, no hedging", "gateway, hedging per endpoint (adaptive p95, 10 %)",
				"gateway, hedging per endpoint + prompt size (adaptive p95, 10 %)" };
		BenchmarkAccess.Hedge[] hedges = { null,
				new BenchmarkAccess.Hedge(true, 95, delay, minDelay, 0.1, Duration.ofMinutes(1), false),
				new BenchmarkAccess.Hedge(true, 95, delay, minDelay, 0.1, Duration.ofMinutes(1), true) };
		System.out.println("| gateway | answered | p50 | **p99** | p99.9 | p99 of prompts < 1K chars | p99 of prompts >= 4K chars"
				+ " | extra calls | **p99 no hedging / p99** |");
		System.out.println("|---|---|---|---|---|---|---|---|---|");
		long noHedgingP99 = 0;
		for (int row = 0; row < names.length; row++) {
			try (PeerServer primary = new PeerServer("primary", delays(model, scale, seed), StubProvider.FailureMode.HANG);
					PeerServer backup = new PeerServer("backup", delays(model, scale, seed + 1), StubProvider.FailureMode.HANG);
					Peers peers = new Peers(scale)) {
				LlmGateway gateway = peers.gatewayOf(primary.baseUrl(), backup.baseUrl(), hedges[row],
						Endpoints.scaled(Duration.ofMillis((long) (firstTokenTimeout * 1000)), scale));
				long interval = (long) (1e9 / rate);
				OpenLoop.run((index) -> call(gateway, prompts[index]), warmup, interval, 30);
				primary.reset();
				backup.reset();
				OpenLoop.Result result = OpenLoop.run((index) -> call(gateway, prompts[warmup + index]), requests,
						interval, 60);
				long calls = primary.received() + backup.received();
				long p99 = percentile(result.waits(), null, 0, Integer.MAX_VALUE, 99);
				if (row == 0) {
					noHedgingP99 = p99;
				}
				int[] measured = Arrays.copyOfRange(sizes, warmup, sizes.length);
				System.out.printf(Locale.ROOT, "| %s | %.1f %% | %s | %s | %s | %s | %s | %+.1f %% | %.2fx |%n", names[row],
						100.0 * result.answeredCount() / requests,
						real(percentile(result.waits(), null, 0, Integer.MAX_VALUE, 50), scale), real(p99, scale),
						real(percentile(result.waits(), null, 0, Integer.MAX_VALUE, 99.9), scale),
						real(percentile(result.waits(), measured, 0, 1024, 99), scale),
						real(percentile(result.waits(), measured, 4096, Integer.MAX_VALUE, 99), scale),
						100.0 * (calls - requests) / requests, (double) noHedgingP99 / p99);
			}
		}
		System.out.println("load avg at end: " + Machine.loadAverage());
	}

	private static boolean call(LlmGateway gateway, ChatRequest request) {
		try {
			ChatResponse answer = gateway.chat(request).block();
			return answer != null && answer.tier() != Tier.BUSY;
		}
		catch (RuntimeException ex) {
			return false;
		}
	}

	// a prompt of so many characters that starts with its size
	private static String prompt(int size) {
		StringBuilder prompt = new StringBuilder(size).append(size).append(' ');
		while (prompt.length() < size) {
			prompt.append("lorem ipsum ");
		}
		prompt.setLength(Math.max(size, Integer.toString(size).length() + 1));
		return prompt.toString();
	}

	// each server's delay for a request: its prompt's size, read off the body, through the model
	private static ToLongFunction<byte[]> delays(Model model, double scale, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		return (body) -> {
			int size = sizeOf(body);
			synchronized (random) {
				return (long) (model.seconds(Math.log(Math.max(1, size)), random) * scale * 1e9);
			}
		};
	}

	private static int sizeOf(byte[] body) {
		outer: for (int i = 0; i + CONTENT.length < body.length; i++) {
			for (int j = 0; j < CONTENT.length; j++) {
				if (body[i + j] != CONTENT[j]) {
					continue outer;
				}
			}
			int size = 0;
			for (int k = i + CONTENT.length; k < body.length && body[k] >= '0' && body[k] <= '9'; k++) {
				size = size * 10 + (body[k] - '0');
			}
			return size;
		}
		return 1;
	}

	private static double median(Model model, double chars) {
		return Math.exp(model.intercept() + model.slope() * (Math.log(chars) - MID));
	}

	// a percentile of the waits of the prompts of sizes in [from, below); all when sizes is null
	private static long percentile(long[] waits, int[] sizes, int from, int below, double percent) {
		long[] chosen = new long[waits.length];
		int n = 0;
		for (int i = 0; i < waits.length; i++) {
			if (sizes == null || (sizes[i] >= from && sizes[i] < below)) {
				chosen[n++] = waits[i];
			}
		}
		long[] sorted = Arrays.copyOf(chosen, n);
		Arrays.sort(sorted);
		return LatencyRecorder.percentile(sorted, percent);
	}

	private static String real(long nanos, double scale) {
		return String.format(Locale.ROOT, "%.2f s", nanos / 1e9 / scale);
	}

}
