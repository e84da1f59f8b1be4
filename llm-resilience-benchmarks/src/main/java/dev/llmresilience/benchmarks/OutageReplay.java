package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import java.util.stream.Collectors;

import dev.llmresilience.benchmarks.StubProvider.FailureMode;
import dev.llmresilience.benchmarks.StubProvider.Outage;
import dev.llmresilience.endpoint.LlmEndpoint;
import dev.llmresilience.gateway.ChatRequest;
import dev.llmresilience.gateway.ChatResponse;
import dev.llmresilience.gateway.DefaultLlmGateway;
import dev.llmresilience.gateway.Tier;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionProvider;
import reactor.util.retry.Retry;

/**
 * The 11-minute outage of the issue, replayed on loopback at 1/100 of real time: a primary that
 * hangs (or answers 500) for the outage and then recovers, a healthy backup, and 4,200 requests
 * arriving evenly over the outage window (open loop: a request arrives on schedule whatever
 * happened to the ones before it). Normal traffic at the same rate runs for a while before the
 * outage (so the breaker's window starts full of successes, as in production) and after it (to see
 * when the primary is used again). Every wait is measured from the request's scheduled arrival.
 *
 * <p>System properties: {@code scenarios} (comma-separated names, default all), {@code passes}
 * (default 1).
 */
public final class OutageReplay {

	/** 1/100 of real time. */
	static final double SCALE = 0.01;

	static final Duration NORMAL_LATENCY = Duration.ofMillis(8);

	static final Duration OUTAGE = Duration.ofMillis(6_600);

	static final int OUTAGE_REQUESTS = 4_200;

	static final Duration BEFORE = Duration.ofMillis(1_000);

	static final Duration AFTER = Duration.ofMillis(2_000);

	static final Duration NAIVE_TIMEOUT = Duration.ofMillis(600);

	static final Duration NAIVE_BACKOFF = Duration.ofMillis(5);

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");

	private static final long INTERVAL_NANOS = OUTAGE.toNanos() / OUTAGE_REQUESTS;

	/** Who the requests go through. */
	enum Client {

		/** WebClient, 3 attempts of 600 ms (Reactor retry, 5 ms backoff), no breaker, no fallback. */
		NAIVE,

		/** The gateway, route [primary]. */
		GATEWAY_PRIMARY,

		/** The gateway, route [primary, backup]. */
		GATEWAY_PRIMARY_BACKUP,

		/** Baseline: WebClient straight to the backup (the backup's own latency). */
		RAW_BACKUP,

		/** Baseline: the gateway, route [backup]. */
		GATEWAY_BACKUP

	}

	/**
	 * One run.
	 * @param name its name
	 * @param client who the requests go through
	 * @param mode what the primary does in the outage, or {@code null} for no outage
	 * @param bulkhead the gateway endpoints' max-concurrent-calls (default 50)
	 * @param deadlineMillis the gateway's deadline (default 900 ms, the 90 s default scaled)
	 */
	record Scenario(String name, Client client, @Nullable FailureMode mode, int bulkhead, long deadlineMillis) {

		Scenario(String name, Client client, @Nullable FailureMode mode, int bulkhead) {
			this(name, client, mode, bulkhead, deadline().toMillis());
		}

	}

	static final List<Scenario> SCENARIOS = List.of(new Scenario("backup-raw", Client.RAW_BACKUP, null, 50),
			new Scenario("backup-gateway", Client.GATEWAY_BACKUP, null, 50),
			new Scenario("hang-naive", Client.NAIVE, FailureMode.HANG, 50),
			new Scenario("hang-gateway-primary", Client.GATEWAY_PRIMARY, FailureMode.HANG, 50),
			new Scenario("hang-gateway-backup", Client.GATEWAY_PRIMARY_BACKUP, FailureMode.HANG, 50),
			new Scenario("hang-gateway-primary-bulkhead1000", Client.GATEWAY_PRIMARY, FailureMode.HANG, 1000),
			new Scenario("hang-gateway-backup-bulkhead1000", Client.GATEWAY_PRIMARY_BACKUP, FailureMode.HANG, 1000),
			new Scenario("hang-gateway-backup-deadline1300", Client.GATEWAY_PRIMARY_BACKUP, FailureMode.HANG, 50, 1300),
			new Scenario("500-naive", Client.NAIVE, FailureMode.HTTP_500, 50),
			new Scenario("500-gateway-primary", Client.GATEWAY_PRIMARY, FailureMode.HTTP_500, 50),
			new Scenario("500-gateway-backup", Client.GATEWAY_PRIMARY_BACKUP, FailureMode.HTTP_500, 50));

	private OutageReplay() {
	}

	public static void main(String[] args) throws Exception {
		String only = System.getProperty("scenarios", "");
		int passes = Integer.getInteger("passes", 1);
		Machine.describe("OutageReplay: the 11-minute outage at 1/100 time");
		System.out.printf(Locale.ROOT,
				"time scale 1/100; outage %d ms with %d requests (one every %.3f ms), %d ms of normal traffic before and %d ms after; "
						+ "normal latency %d ms; gateway: built-in defaults with every duration x0.01 (timeout %s, open %s, backoff %s..%s, deadline %s)%n",
				OUTAGE.toMillis(), OUTAGE_REQUESTS, INTERVAL_NANOS / 1e6, BEFORE.toMillis(), AFTER.toMillis(),
				NORMAL_LATENCY.toMillis(), Endpoints.scaled(Duration.ofSeconds(60), SCALE),
				Endpoints.scaled(Duration.ofSeconds(30), SCALE), Endpoints.scaled(Duration.ofMillis(500), SCALE),
				Endpoints.scaled(Duration.ofSeconds(8), SCALE), deadline());
		warmUp();
		List<String> rows = new ArrayList<>();
		Result backupBaseline = null;
		for (int pass = 1; pass <= passes; pass++) {
			for (Scenario scenario : SCENARIOS) {
				if (!only.isEmpty() && !Arrays.asList(only.split(",")).contains(scenario.name())) {
					continue;
				}
				System.out.printf(Locale.ROOT, "%n-- %s (pass %d, load avg %s)%n", scenario.name(), pass, Machine.loadAverage());
				Result result = run(scenario, OUTAGE_REQUESTS);
				if (scenario.client() == Client.RAW_BACKUP) {
					backupBaseline = result;
				}
				result.print(backupBaseline);
				rows.add(result.row());
				System.gc();
				Thread.sleep(500);
			}
		}
		System.out.println();
		System.out.println("| scenario | primary hits in outage: before open / after open (probes allowed: 3 x half-opens; most sent in one half-open) | time to open (real) | wait before open: mean / p99 (real) | wait after open: mean / p99 / max (real) | answered | primary used again after recovery (real) | breaker CLOSED after recovery (real) |");
		System.out.println("|---|---|---|---|---|---|---|---|");
		rows.forEach(System.out::println);
		System.out.println("load avg at end: " + Machine.loadAverage());
	}

	static Duration deadline() {
		return Endpoints.scaled(Endpoints.DEFAULT_DEADLINE, SCALE);
	}

	/** Every client for a few seconds of normal traffic, so that the measured runs are compiled code. */
	private static void warmUp() {
		System.out.println("warming up...");
		for (Client client : Client.values()) {
			run(new Scenario("warm-up", client, null, 50), 1_000);
		}
	}

	private static Result run(Scenario scenario, int outageRequests) {
		try (StubProvider primary = new StubProvider("primary", NORMAL_LATENCY, mode(scenario), true);
				StubProvider backup = new StubProvider("backup", NORMAL_LATENCY, FailureMode.HANG, true);
				Endpoints endpoints = new Endpoints()) {
			List<long[]> transitions = new ArrayList<>();
			List<long[]> sends = new ArrayList<>();
			List<ConnectionProvider> pools = new ArrayList<>();
			Supplier<Mono<Reply>> call = client(scenario, primary, backup, endpoints, transitions, sends, pools);
			long before = BEFORE.toNanos() / INTERVAL_NANOS;
			long after = AFTER.toNanos() / INTERVAL_NANOS;
			int total = (int) (before + outageRequests + after);
			long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
			long outageStart = start + before * INTERVAL_NANOS;
			long outageEnd = outageStart + outageRequests * INTERVAL_NANOS;
			if (scenario.mode() != null) {
				primary.outage(new Outage(outageStart, outageEnd));
			}
			long[] scheduled = new long[total];
			long[] waits = new long[total];
			long[] lags = new long[total];
			Reply[] replies = new Reply[total];
			CountDownLatch done = new CountDownLatch(total);
			for (int i = 0; i < total; i++) {
				long target = start + i * INTERVAL_NANOS;
				scheduled[i] = target;
				for (long now = System.nanoTime(); now < target; now = System.nanoTime()) {
					LockSupport.parkNanos(target - now);
				}
				int index = i;
				lags[i] = System.nanoTime() - target;
				call.get().subscribe((reply) -> {
					waits[index] = System.nanoTime() - target;
					replies[index] = reply;
					done.countDown();
				}, (error) -> {
					waits[index] = System.nanoTime() - target;
					replies[index] = new Reply(Answer.FAILED, error.getClass().getSimpleName());
					done.countDown();
				});
			}
			boolean finished = done.await(10, TimeUnit.SECONDS);
			pools.forEach(ConnectionProvider::dispose);
			return new Result(scenario, finished, outageStart, outageEnd, scheduled, waits, lags, replies,
					primary.arrivals(), backup.arrivals(), copy(transitions), copy(sends));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static List<long[]> copy(List<long[]> list) {
		synchronized (list) {
			return List.copyOf(list);
		}
	}

	private static FailureMode mode(Scenario scenario) {
		return (scenario.mode() != null) ? scenario.mode() : FailureMode.HANG;
	}

	/**
	 * The scenario's client. For the gateway, the primary's transport is wrapped to note the
	 * breaker's state each time a call gets past the breaker and bulkhead to the wire (into
	 * {@code sends}), and the breaker's transitions are noted (into {@code transitions}).
	 */
	private static Supplier<Mono<Reply>> client(Scenario scenario, StubProvider primary, StubProvider backup,
			Endpoints endpoints, List<long[]> transitions, List<long[]> sends, List<ConnectionProvider> pools) {
		switch (scenario.client()) {
			case NAIVE: {
				ConnectionProvider pool = RawClient.pool("naive", 4096);
				pools.add(pool);
				RawClient naive = new RawClient(primary.baseUrl(), pool);
				return () -> naive.chat()
					.timeout(NAIVE_TIMEOUT)
					.retryWhen(Retry.backoff(2, NAIVE_BACKOFF))
					.map((content) -> new Reply(Answer.PRIMARY, null));
			}
			case RAW_BACKUP: {
				ConnectionProvider pool = RawClient.pool("raw-backup", 4096);
				pools.add(pool);
				RawClient raw = new RawClient(backup.baseUrl(), pool);
				return () -> raw.chat().map((content) -> new Reply(Answer.BACKUP, null));
			}
			default: {
				List<LlmEndpoint> members = new ArrayList<>();
				if (scenario.client() != Client.GATEWAY_BACKUP) {
					AtomicReference<CircuitBreaker> breaker = new AtomicReference<>();
					LlmEndpoint endpoint = endpoints.http(
							Endpoints.settings("primary", primary.baseUrl(), SCALE, scenario.bulkhead()),
							(client) -> (request) -> Mono.defer(() -> {
								synchronized (sends) {
									sends.add(new long[] { System.nanoTime(), breaker.get().getState().ordinal() });
								}
								return client.chat(request);
							}));
					breaker.set(endpoint.circuitBreaker());
					endpoint.circuitBreaker().getEventPublisher().onStateTransition((event) -> {
						synchronized (transitions) {
							transitions.add(new long[] { System.nanoTime(),
									event.getStateTransition().getToState().ordinal() });
						}
					});
					members.add(endpoint);
				}
				if (scenario.client() != Client.GATEWAY_PRIMARY) {
					members.add(endpoints.http(Endpoints.settings("backup", backup.baseUrl(), SCALE, scenario.bulkhead())));
				}
				DefaultLlmGateway gateway = Endpoints.gateway(
						Map.of("default", members.stream().map(LlmEndpoint::name).toList()),
						Duration.ofMillis(scenario.deadlineMillis()),
						members.toArray(new LlmEndpoint[0]));
				return () -> gateway.chat(REQUEST).map(Reply::of);
			}
		}
	}

	/** How one request ended. */
	enum Answer {

		PRIMARY, BACKUP, BUSY, FAILED;

		boolean answered() {
			return this == PRIMARY || this == BACKUP;
		}

	}

	/**
	 * How one request ended, and for a BUSY answer why: its attempts' outcomes.
	 * @param answer how it ended
	 * @param why the attempts of a BUSY answer, or the error of a failed call
	 */
	record Reply(Answer answer, @Nullable String why) {

		static Reply of(ChatResponse response) {
			if (response.tier() == Tier.BUSY) {
				return new Reply(Answer.BUSY, response.attempts()
					.stream()
					.map((attempt) -> attempt.endpoint() + ":" + attempt.outcome())
					.collect(Collectors.joining(",")));
			}
			return new Reply("primary".equals(response.endpoint()) ? Answer.PRIMARY : Answer.BACKUP, null);
		}

	}

	/** What one scenario measured, and how it reads rescaled to real time. */
	private record Result(Scenario scenario, boolean finished, long outageStart, long outageEnd, long[] scheduled,
			long[] waits, long[] lags, Reply[] replies, List<StubProvider.Arrival> primaryHits,
			List<StubProvider.Arrival> backupHits, List<long[]> transitions, List<long[]> sends) {

		/** First CLOSED -> OPEN at or after the outage's start, else {@code Long.MAX_VALUE}. */
		long openedAt() {
			return this.transitions.stream()
				.filter((t) -> t[0] >= this.outageStart && t[1] == CircuitBreaker.State.OPEN.ordinal())
				.mapToLong((t) -> t[0])
				.min()
				.orElse(Long.MAX_VALUE);
		}

		long halfOpensDuringOutage(long from) {
			return this.transitions.stream()
				.filter((t) -> t[0] >= from && t[0] < this.outageEnd && t[1] == CircuitBreaker.State.HALF_OPEN.ordinal())
				.count();
		}

		long closedAfterRecovery() {
			return this.transitions.stream()
				.filter((t) -> t[0] >= this.outageEnd && t[1] == CircuitBreaker.State.CLOSED.ordinal())
				.mapToLong((t) -> t[0] - this.outageEnd)
				.min()
				.orElse(-1);
		}

		long primaryUsedAgain() {
			return this.primaryHits.stream()
				.filter((hit) -> hit.at() >= this.outageEnd && !hit.down())
				.mapToLong((hit) -> hit.at() - this.outageEnd)
				.min()
				.orElse(-1);
		}

		boolean inOutage(int index) {
			return this.scheduled[index] >= this.outageStart && this.scheduled[index] < this.outageEnd;
		}

		long[] waits(long from, long to) {
			List<Long> selected = new ArrayList<>();
			for (int i = 0; i < this.scheduled.length; i++) {
				if (inOutage(i) && this.scheduled[i] >= from && this.scheduled[i] < to && this.replies[i] != null) {
					selected.add(this.waits[i]);
				}
			}
			return selected.stream().mapToLong(Long::longValue).sorted().toArray();
		}

		long count(long from, long to, boolean answeredOnly) {
			long count = 0;
			for (int i = 0; i < this.scheduled.length; i++) {
				if (inOutage(i) && this.scheduled[i] >= from && this.scheduled[i] < to
						&& (!answeredOnly || (this.replies[i] != null && this.replies[i].answer().answered()))) {
					count++;
				}
			}
			return count;
		}

		long hits(long from, long to) {
			return this.primaryHits.stream().filter((hit) -> hit.down() && hit.at() >= from && hit.at() < to).count();
		}

		/** Calls the gateway put on the wire to the primary in [from, to) of the outage, by breaker state then. */
		long sends(long from, long to, CircuitBreaker.@Nullable State state) {
			return this.sends.stream()
				.filter((send) -> send[0] >= Math.max(from, this.outageStart) && send[0] < Math.min(to, this.outageEnd))
				.filter((send) -> state == null || send[1] == state.ordinal())
				.count();
		}

		/** The most calls put on the wire in one HALF_OPEN period of the outage. */
		long mostProbesInOneHalfOpen() {
			Map<Long, Long> perPeriod = new HashMap<>();
			for (long[] send : this.sends) {
				if (send[0] < this.outageStart || send[0] >= this.outageEnd
						|| send[1] != CircuitBreaker.State.HALF_OPEN.ordinal()) {
					continue;
				}
				long period = this.transitions.stream()
					.filter((t) -> t[0] <= send[0] && t[1] == CircuitBreaker.State.HALF_OPEN.ordinal())
					.mapToLong((t) -> t[0])
					.max()
					.orElse(-1);
				perPeriod.merge(period, 1L, Long::sum);
			}
			return perPeriod.values().stream().mapToLong(Long::longValue).max().orElse(0);
		}

		/** Why requests of the outage window got BUSY (or failed): their attempts, most frequent first. */
		String busyReasons() {
			Map<String, Long> reasons = new HashMap<>();
			for (int i = 0; i < this.replies.length; i++) {
				if (inOutage(i) && this.replies[i] != null && !this.replies[i].answer().answered()) {
					reasons.merge(String.valueOf(this.replies[i].why()), 1L, Long::sum);
				}
			}
			return reasons.entrySet()
				.stream()
				.sorted(Map.Entry.<String, Long>comparingByValue().reversed())
				.limit(6)
				.map((entry) -> entry.getValue() + " x [" + entry.getKey() + "]")
				.collect(Collectors.joining("; "));
		}

		boolean hasBreaker() {
			return this.scenario.client() == Client.GATEWAY_PRIMARY
					|| this.scenario.client() == Client.GATEWAY_PRIMARY_BACKUP;
		}

		void print(@Nullable Result baseline) {
			long opened = openedAt();
			long split = hasBreaker() ? opened : Long.MAX_VALUE;
			long total = count(Long.MIN_VALUE, Long.MAX_VALUE, false);
			long answered = count(Long.MIN_VALUE, Long.MAX_VALUE, true);
			System.out.printf(Locale.ROOT, "requests in the outage window: %d, answered %d (%.1f %%)%s%n", total, answered,
					100.0 * answered / total, this.finished ? "" : " -- NOT ALL FINISHED within 10 s");
			System.out.printf(Locale.ROOT, "primary: %d hits in all, %d during the outage; backup: %d hits%n",
					this.primaryHits.size(), hits(Long.MIN_VALUE, Long.MAX_VALUE), this.backupHits.size());
			long[] lagsSorted = this.lags.clone();
			Arrays.sort(lagsSorted);
			System.out.printf(Locale.ROOT, "firing lag behind schedule (machine stalls, included in the waits): p50 %s, p99 %s, max %s%n",
					ms(LatencyRecorder.percentile(lagsSorted, 50)), ms(LatencyRecorder.percentile(lagsSorted, 99)),
					ms(lagsSorted[lagsSorted.length - 1]));
			if (!busyReasons().isEmpty()) {
				System.out.println("not answered in the outage window, by attempts: " + busyReasons());
			}
			if (hasBreaker()) {
				if (opened == Long.MAX_VALUE) {
					System.out.println("breaker never opened");
				}
				else {
					long halfOpens = halfOpensDuringOutage(opened);
					System.out.printf(Locale.ROOT,
							"breaker opened %s after the outage began (real %s); calls the gateway sent the primary during the outage: %d before it opened, %d after (%d while HALF_OPEN, %d while CLOSED, %d while OPEN); half-open %d times: %d probes allowed, at most %d sent in one half-open period; server arrivals in the outage: %d before, %d after%n",
							ms(opened - this.outageStart), real(opened - this.outageStart), sends(Long.MIN_VALUE, opened, null),
							sends(opened, Long.MAX_VALUE, null), sends(opened, Long.MAX_VALUE, CircuitBreaker.State.HALF_OPEN),
							sends(opened, Long.MAX_VALUE, CircuitBreaker.State.CLOSED),
							sends(opened, Long.MAX_VALUE, CircuitBreaker.State.OPEN), halfOpens, 3 * halfOpens,
							mostProbesInOneHalfOpen(), hits(Long.MIN_VALUE, opened), hits(opened, Long.MAX_VALUE));
				}
				System.out.print("transitions (ms from outage start):");
				this.transitions.forEach((t) -> System.out.printf(Locale.ROOT, " %s@%.1f",
						CircuitBreaker.State.values()[(int) t[1]], (t[0] - this.outageStart) / 1e6));
				System.out.println();
			}
			describe("wait before open", waits(Long.MIN_VALUE, split), count(Long.MIN_VALUE, split, true),
					count(Long.MIN_VALUE, split, false));
			if (hasBreaker() && opened != Long.MAX_VALUE) {
				long[] after = waits(split, Long.MAX_VALUE);
				describe("wait after open ", after, count(split, Long.MAX_VALUE, true), count(split, Long.MAX_VALUE, false));
				if (baseline != null && this.scenario.client() == Client.GATEWAY_PRIMARY_BACKUP) {
					long[] own = baseline.waits(Long.MIN_VALUE, Long.MAX_VALUE);
					double ownMean = LatencyRecorder.mean(own);
					long ownP99 = LatencyRecorder.percentile(own, 99);
					long over = Arrays.stream(after).filter((wait) -> wait > ownP99 * 1.05).count();
					long timedOut = Arrays.stream(after).filter((wait) -> wait >= NAIVE_TIMEOUT.toNanos() * 9 / 10).count();
					System.out.printf(Locale.ROOT,
							"after open vs the backup's own latency (raw WebClient baseline: mean %s, p99 %s): mean x%.3f, p50 x%.3f, p99 x%.3f; %d of %d waited longer than 1.05 x its p99, %d of them 540 ms or more (a timeout)%n",
							ms(ownMean), ms(ownP99), LatencyRecorder.mean(after) / ownMean,
							(double) LatencyRecorder.percentile(after, 50) / LatencyRecorder.percentile(own, 50),
							(double) LatencyRecorder.percentile(after, 99) / ownP99, over, after.length, timedOut);
				}
			}
			long usedAgain = primaryUsedAgain();
			long closed = closedAfterRecovery();
			if (this.scenario.mode() != null) {
				System.out.printf(Locale.ROOT, "after recovery: primary used again after %s (real %s)%s%n",
						(usedAgain < 0) ? "never" : ms(usedAgain), (usedAgain < 0) ? "-" : real(usedAgain),
						hasBreaker() ? ", breaker CLOSED after " + ((closed < 0) ? "never" : ms(closed) + " (real " + real(closed) + ")") : "");
			}
		}

		String row() {
			long opened = openedAt();
			boolean breaker = hasBreaker() && opened != Long.MAX_VALUE;
			long split = breaker ? opened : Long.MAX_VALUE;
			long[] before = waits(Long.MIN_VALUE, split);
			long[] after = breaker ? waits(split, Long.MAX_VALUE) : new long[0];
			long total = count(Long.MIN_VALUE, Long.MAX_VALUE, false);
			long answered = count(Long.MIN_VALUE, Long.MAX_VALUE, true);
			String hits = breaker ? sends(Long.MIN_VALUE, opened, null) + " / " + sends(opened, Long.MAX_VALUE, null) + " ("
					+ 3 * halfOpensDuringOutage(opened) + ", at most " + mostProbesInOneHalfOpen() + " per half-open)"
					: hits(Long.MIN_VALUE, Long.MAX_VALUE) + " / -";
			long usedAgain = primaryUsedAgain();
			long closed = closedAfterRecovery();
			return String.format(Locale.ROOT, "| %s | %s | %s | %s / %s | %s | %d of %d (%.1f %%) | %s | %s |", this.scenario.name(), hits,
					breaker ? real(opened - this.outageStart) : "-", real(LatencyRecorder.mean(before)),
					real(LatencyRecorder.percentile(before, 99)),
					breaker ? real(LatencyRecorder.mean(after)) + " / " + real(LatencyRecorder.percentile(after, 99)) + " / "
							+ real(after.length > 0 ? after[after.length - 1] : 0) : "-",
					answered, total, 100.0 * answered / total,
					(this.scenario.mode() == null) ? "-" : (usedAgain < 0) ? "never" : real(usedAgain),
					(this.scenario.mode() == null || !hasBreaker()) ? "-" : (closed < 0) ? "never" : real(closed));
		}

		private static void describe(String label, long[] waits, long answered, long total) {
			if (total == 0) {
				System.out.println(label + ": no request");
				return;
			}
			System.out.printf(Locale.ROOT, "%s: %d requests, %d answered; mean %s, p50 %s, p99 %s, max %s (real: mean %s, p99 %s)%n",
					label, total, answered, ms(LatencyRecorder.mean(waits)), ms(LatencyRecorder.percentile(waits, 50)),
					ms(LatencyRecorder.percentile(waits, 99)), ms(waits.length > 0 ? waits[waits.length - 1] : 0),
					real(LatencyRecorder.mean(waits)), real(LatencyRecorder.percentile(waits, 99)));
		}

		private static String ms(double nanos) {
			return String.format(Locale.ROOT, "%.2f ms", nanos / 1e6);
		}

		/** A scaled duration as it would be in real time (x100). */
		private static String real(double nanos) {
			double seconds = nanos / 1e9 / SCALE;
			return (seconds < 1) ? String.format(Locale.ROOT, "%.0f ms", seconds * 1000)
					: String.format(Locale.ROOT, "%.1f s", seconds);
		}

	}

}
