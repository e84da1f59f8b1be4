package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Priority;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.BenchmarkAccess;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.engine.RouteBalancer;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGateway;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionProvider;
import reactor.util.retry.Retry;

import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;

/**
 * The 429 storm: a primary whose key allows 20 requests and 4,000 tokens per 10 s window (each
 * request costs about 150 tokens as the provider counts them), offered three times its request
 * limit (6 calls a second) for 10 minutes at {@code scale} of real time, and a healthy backup.
 * Through the naive client (3 attempts on a 429, 500 ms backoff doubling, then the backup), and
 * through the gateway with the built-in defaults (3 attempts, the retry budget of 20 % plus 3 a
 * second): with a provider that announces its limits in OpenAI's headers, with one that says only
 * {@code retry-after} on its 429s, and the latter with no retry budget ({@code retry.budget} 100).
 * Printed per run: calls answered, the primary's requests and 429s, how much of its limit it was
 * used to, upstream requests per call, and the waits. Then interactive calls beside batch work
 * ({@code ChatRequest.priority}): alone, with the batch calls marked {@code batch}, and with
 * nothing marked.
 *
 * <p>System properties: {@code scale} (default 0.1), {@code minutes} (real-time minutes, default
 * 10), {@code runs} (comma separated, default all: {@code naive}, {@code headers}, {@code retry-after},
 * {@code no-budget}, {@code batch}).
 */
public final class StormReplay {

	private static final int REQUESTS = 20;

	private static final long TOKENS = 4_000;

	private static final Duration WINDOW = Duration.ofSeconds(10);

	private static final double RATE = 6;

	private static final ChatRequest REQUEST = ChatRequest.builder().user("Summarise the storm in one line.")
		.maxTokens(100)
		.build();

	private static final String BODY = "{\"model\":\"primary-model\",\"max_tokens\":100,\"messages\":[{\"role\":\"user\","
			+ "\"content\":\"Summarise the storm in one line.\"}]}";

	private StormReplay() {
	}

	public static void main(String[] args) throws Exception {
		double scale = Double.parseDouble(System.getProperty("scale", "0.1"));
		int minutes = Integer.getInteger("minutes", 10);
		String only = System.getProperty("runs", "");
		Machine.describe(String.format(Locale.ROOT,
				"StormReplay: %d requests and %d tokens per %d s, offered %.0f calls/s for %d minutes, 1/%.0f time", REQUESTS,
				TOKENS, WINDOW.toSeconds(), RATE, minutes, 1 / scale));
		System.out.println("| run | answered | primary requests | 429s received (of the primary's requests) | primary used (of its limit) | upstream requests per call | wait p50 / p99 (real) |");
		System.out.println("|---|---|---|---|---|---|---|");
		// a warm-up run of a minute, not printed
		run("gateway, headers", scale, 1, false);
		Map<String, String> runs = new LinkedHashMap<>();
		runs.put("naive", "naive client");
		runs.put("headers", "gateway, headers");
		runs.put("retry-after", "gateway, retry-after only");
		runs.put("no-budget", "gateway, retry-after only, no retry budget");
		runs.forEach((key, name) -> {
			if (only.isEmpty() || Arrays.asList(only.split(",")).contains(key)) {
				try {
					run(name, scale, minutes, true);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
		});
		if (only.isEmpty() || Arrays.asList(only.split(",")).contains("batch")) {
			System.out.println();
			System.out.println("Interactive calls (0.8 a second) beside batch work (5 a second), the backup at 2 s:");
			System.out.println("| run | interactive answered | interactive from the primary | interactive wait p50 / p99 (real) | batch from the primary | primary 429s |");
			System.out.println("|---|---|---|---|---|---|");
			priority("interactive alone", scale, minutes, 0, Priority.BATCH);
			priority("interactive and batch, batch marked batch", scale, minutes, 5, Priority.BATCH);
			priority("interactive and batch, nothing marked", scale, minutes, 5, Priority.INTERACTIVE);
		}
		System.out.println("load avg at end: " + Machine.loadAverage());
		System.exit(0);
	}

	private static void run(String name, double scale, int minutes, boolean print) throws InterruptedException {
		boolean announces = name.contains("headers") || name.startsWith("naive");
		Duration delay = Endpoints.scaled(Duration.ofMillis(800), scale);
		try (LimitedProvider primary = new LimitedProvider("primary", REQUESTS, TOKENS, Endpoints.scaled(WINDOW, scale),
				delay, announces); PeerServer backup = new PeerServer("backup", delay::toNanos, StubProvider.FailureMode.HANG);
				Endpoints endpoints = new Endpoints()) {
			Supplier<Mono<Boolean>> call = name.startsWith("naive") ? naive(primary, backup, scale)
					: gateway(endpoints, primary, backup, scale, !name.contains("no retry budget"));
			long interval = (long) (1e9 / (RATE / scale));
			int total = (int) (minutes * 60 * RATE);
			long[] waits = new long[total];
			AtomicLong answered = new AtomicLong();
			CountDownLatch done = new CountDownLatch(total);
			long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
			long firstWindows = primary.windows();
			for (int i = 0; i < total; i++) {
				long target = start + i * interval;
				for (long now = System.nanoTime(); now < target; now = System.nanoTime()) {
					LockSupport.parkNanos(target - now);
				}
				int index = i;
				call.get().subscribe((ok) -> {
					waits[index] = System.nanoTime() - target;
					if (ok) {
						answered.incrementAndGet();
					}
					done.countDown();
				}, (error) -> {
					waits[index] = System.nanoTime() - target;
					done.countDown();
				});
			}
			long windows = primary.windows() - firstWindows + 1;
			boolean finished = done.await(Endpoints.scaled(Duration.ofMinutes(2), scale).toSeconds() + 10, TimeUnit.SECONDS);
			if (!print) {
				return;
			}
			long[] sorted = waits.clone();
			Arrays.sort(sorted);
			long accepted = primary.received() - primary.refused();
			System.out.printf(Locale.ROOT, "| %s | %.1f %%%s | %d | %d (%.1f %%) | %.0f %% | %.3f | %.2f / %.2f s |%n", name,
					100.0 * answered.get() / total, finished ? "" : " (not all ended)", primary.received(),
					primary.refused(), 100.0 * primary.refused() / Math.max(1, primary.received()),
					100.0 * accepted / (REQUESTS * (double) windows),
					(primary.received() + backup.received()) / (double) total,
					LatencyRecorder.percentile(sorted, 50) / 1e9 / scale, LatencyRecorder.percentile(sorted, 99) / 1e9 / scale);
		}
	}

	/**
	 * Interactive calls at 0.8 a second, within the primary's interactive reserve (10 of each
	 * window's 20 with the built-in share of a half), beside {@code batchRate} batch calls a second,
	 * marked {@code batchPriority}; the backup answers in 2 s, so an interactive call pushed off the
	 * primary shows in its wait.
	 */
	private static void priority(String name, double scale, int minutes, double batchRate, Priority batchPriority)
			throws InterruptedException {
		Duration delay = Endpoints.scaled(Duration.ofMillis(800), scale);
		long backupDelay = Endpoints.scaled(Duration.ofSeconds(2), scale).toNanos();
		try (LimitedProvider primary = new LimitedProvider("primary", REQUESTS, TOKENS, Endpoints.scaled(WINDOW, scale),
				delay, true); PeerServer backup = new PeerServer("backup", () -> backupDelay, StubProvider.FailureMode.HANG);
				Endpoints endpoints = new Endpoints()) {
			LlmGateway gateway = gateway(endpoints,
					Endpoints.settings("primary", primary.baseUrl(), scale, 50, false), backup, scale);
			double interactiveRate = 0.8;
			double rate = interactiveRate + batchRate;
			int total = (int) (minutes * 60 * rate);
			long interval = (long) (1e9 / (rate / scale));
			long[] waits = new long[total];
			boolean[] interactive = new boolean[total];
			String[] from = new String[total];
			CountDownLatch done = new CountDownLatch(total);
			long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20);
			for (int i = 0; i < total; i++) {
				// interactive calls spread evenly among the batch ones
				interactive[i] = batchRate == 0
						|| Math.floor((i + 1) * interactiveRate / rate) > Math.floor(i * interactiveRate / rate);
				long target = start + i * interval;
				for (long now = System.nanoTime(); now < target; now = System.nanoTime()) {
					LockSupport.parkNanos(target - now);
				}
				int index = i;
				ChatRequest request = interactive[i] ? REQUEST : REQUEST.toBuilder().priority(batchPriority).build();
				gateway.chat(request).subscribe((answer) -> {
					waits[index] = System.nanoTime() - target;
					from[index] = (answer.tier() == Tier.BUSY) ? "busy" : answer.endpoint();
					done.countDown();
				}, (error) -> {
					waits[index] = System.nanoTime() - target;
					from[index] = "error";
					done.countDown();
				});
			}
			done.await(Endpoints.scaled(Duration.ofMinutes(2), scale).toSeconds() + 10, TimeUnit.SECONDS);
			long[] interactiveWaits = new long[total];
			int interactiveCount = 0;
			int interactiveAnswered = 0;
			int interactivePrimary = 0;
			int batchCount = 0;
			int batchPrimary = 0;
			for (int i = 0; i < total; i++) {
				if (interactive[i]) {
					interactiveWaits[interactiveCount++] = waits[i];
					interactiveAnswered += ("primary".equals(from[i]) || "backup".equals(from[i])) ? 1 : 0;
					interactivePrimary += "primary".equals(from[i]) ? 1 : 0;
				}
				else {
					batchCount++;
					batchPrimary += "primary".equals(from[i]) ? 1 : 0;
				}
			}
			long[] sorted = Arrays.copyOf(interactiveWaits, interactiveCount);
			Arrays.sort(sorted);
			System.out.printf(Locale.ROOT, "| %s | %.1f %% of %d | %.1f %% | %.2f / %.2f s | %s | %d |%n", name,
					100.0 * interactiveAnswered / interactiveCount, interactiveCount,
					100.0 * interactivePrimary / interactiveCount, LatencyRecorder.percentile(sorted, 50) / 1e9 / scale,
					LatencyRecorder.percentile(sorted, 99) / 1e9 / scale,
					(batchCount > 0) ? String.format(Locale.ROOT, "%.1f %% of %d", 100.0 * batchPrimary / batchCount, batchCount)
							: "-",
					primary.refused());
		}
	}

	private static Supplier<Mono<Boolean>> gateway(Endpoints endpoints, LimitedProvider primary, PeerServer backup,
			double scale, boolean budget) {
		EndpointSettings settings = Endpoints.settings("primary", primary.baseUrl(), scale, 50, false);
		if (!budget) {
			EndpointSettings.RetrySettings retry = settings.retry();
			settings = settings.toBuilder()
				.retry(new EndpointSettings.RetrySettings(retry.maxAttempts(), retry.initialBackoff(), retry.multiplier(),
						retry.maxBackoff(), retry.jitter(), retry.maxRetryAfter(), 100f, retry.budgetMinPerSecond()))
				.build();
		}
		LlmGateway gateway = gateway(endpoints, settings, backup, scale);
		return () -> gateway.chat(REQUEST).map((answer) -> answer.tier() != Tier.BUSY);
	}

	/** The route [primary, backup]: a primary that learns its limits from its answers' headers. */
	private static LlmGateway gateway(Endpoints endpoints, EndpointSettings primary, PeerServer backup, double scale) {
		LlmEndpoint first = endpoints.learning(primary);
		LlmEndpoint second = endpoints.http(Endpoints.settings("backup", backup.baseUrl(), scale, 200, false));
		EndpointRegistry registry = new EndpointRegistry(List.of(first, second),
				Map.of("default", List.of("primary", "backup")), List.of());
		return BenchmarkAccess.gateway(registry, Endpoints.scaled(Endpoints.DEFAULT_DEADLINE, scale),
				RouteBalancer.priority(registry), null);
	}

	/** 3 attempts on a 429 or a 5xx, 500 ms doubling (scaled), then the backup. */
	private static Supplier<Mono<Boolean>> naive(LimitedProvider primary, PeerServer backup, double scale) {
		WebClient client = WebClient.builder()
			.clientConnector(new org.springframework.http.client.reactive.ReactorClientHttpConnector(
					reactor.netty.http.client.HttpClient.create(ConnectionProvider.create("naive", 500))))
			.build();
		Duration backoff = Endpoints.scaled(Duration.ofMillis(500), scale);
		return () -> post(client, primary.baseUrl())
			.retryWhen(Retry.backoff(2, backoff)
				.filter((error) -> error instanceof WebClientResponseException refused
						&& (refused.getStatusCode().value() == 429 || refused.getStatusCode().is5xxServerError())))
			.onErrorResume((error) -> post(client, backup.baseUrl()))
			.map((body) -> !body.isEmpty());
	}

	private static Mono<String> post(WebClient client, String baseUrl) {
		return client.post()
			.uri(baseUrl + "/chat/completions")
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(BODY)
			.retrieve()
			.bodyToMono(String.class);
	}

}
