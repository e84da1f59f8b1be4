package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import dev.llmresilience.benchmarks.StubProvider.FailureMode;
import dev.llmresilience.benchmarks.StubProvider.Outage;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.gateway.LlmGateway;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.netty.resources.ConnectionProvider;
import reactor.util.retry.Retry;

/**
 * The 11-minute outage that started the project, replayed on loopback at 1/100 of real time (or
 * {@code -Dscale}): a primary that hangs, answers 500, or sends its first token only after 20 s for
 * the outage and then recovers, a healthy backup, and 4,200 requests arriving evenly over the outage window (open loop: a request
 * arrives on schedule whatever happened to the ones before it). Normal traffic at the same rate
 * runs for a while before the outage (so the breaker's window starts full of successes, as in
 * production) and, except in the {@code -quiet} and {@code -unlucky} scenarios, after it (to see when
 * the primary is used again; those send nothing after the outage, to see whether the breaker closes
 * without traffic, and in {@code -unlucky} the primary recovers just after a half-open's probes went
 * out into the outage, the worst moment). Every wait is measured from the request's scheduled arrival.
 *
 * <p>System properties: {@code scenarios} (comma-separated names, default all), {@code passes}
 * (default 1), {@code scale} (default 0.01: every duration of the run, the providers' and the
 * gateway's, is its real-time value times this).
 */
public final class OutageReplay {

	/** The time scale: 1/100 of real time unless {@code -Dscale} says otherwise (0.02 for 1/50). */
	static final double SCALE = Double.parseDouble(System.getProperty("scale", "0.01"));

	/** The providers' normal time to a whole answer (first token at half of it). */
	static final Duration NORMAL_LATENCY = scaled(Duration.ofMillis(800));

	static final Duration OUTAGE = scaled(Duration.ofSeconds(660));

	static final int OUTAGE_REQUESTS = 4_200;

	static final Duration BEFORE = scaled(Duration.ofSeconds(100));

	static final Duration AFTER = scaled(Duration.ofSeconds(200));

	static final Duration NAIVE_TIMEOUT = scaled(Duration.ofSeconds(60));

	static final Duration NAIVE_BACKOFF = scaled(Duration.ofMillis(500));

	/** The slow primary's first token. */
	static final Duration SLOW_FIRST_TOKEN = scaled(Duration.ofSeconds(20));

	private static final ChatRequest REQUEST = ChatRequest.ofUser("Hello");

	private static final long INTERVAL_NANOS = OUTAGE.toNanos() / OUTAGE_REQUESTS;

	private OutageReplay() {
	}

	public static void main(String[] args) throws Exception {
		String only = System.getProperty("scenarios", "");
		int passes = Integer.getInteger("passes", 1);
		Machine.describe(String.format(Locale.ROOT, "OutageReplay: the 11-minute outage at 1/%.0f time", 1 / SCALE));
		System.out.printf(Locale.ROOT,
				"time scale 1/%.0f; outage %d ms with %d requests (one every %.3f ms), %d ms of normal traffic before and %d ms after "
						+ "(none in -quiet); normal latency %d ms (first token at half of it), slow first token %d ms; gateway deadline %s%n",
				1 / SCALE, OUTAGE.toMillis(), OUTAGE_REQUESTS, INTERVAL_NANOS / 1e6, BEFORE.toMillis(), AFTER.toMillis(),
				NORMAL_LATENCY.toMillis(), SLOW_FIRST_TOKEN.toMillis(), deadline());
		System.out.println("endpoint settings: " + Endpoints.describe(Endpoints.settings("primary", "http://127.0.0.1:9/v1", SCALE, 50)));
		warmUp();
		List<String> rows = new ArrayList<>();
		OutageResult backupBaseline = null;
		for (int pass = 1; pass <= passes; pass++) {
			for (Scenario scenario : Scenario.ALL) {
				if (!only.isEmpty() && !Arrays.asList(only.split(",")).contains(scenario.name())) {
					continue;
				}
				System.out.printf(Locale.ROOT, "%n-- %s (pass %d, load avg %s)%n", scenario.name(), pass, Machine.loadAverage());
				OutageResult result = run(scenario, OUTAGE_REQUESTS);
				if (scenario.client() == Scenario.Client.RAW_BACKUP) {
					backupBaseline = result;
				}
				OutageReport.print(result, backupBaseline);
				rows.add(result.row());
				System.gc();
				Thread.sleep(500);
			}
		}
		System.out.println();
		System.out.println(OutageResult.HEADER);
		rows.forEach(System.out::println);
		System.out.println("load avg at end: " + Machine.loadAverage());
	}

	/** A real-time duration on the replay's scale. */
	static Duration scaled(Duration real) {
		return Endpoints.scaled(real, SCALE);
	}

	static Duration deadline() {
		return Endpoints.scaled(Endpoints.DEFAULT_DEADLINE, SCALE);
	}

	/** Every client for a few seconds of normal traffic, so that the measured runs are compiled code. */
	private static void warmUp() {
		System.out.println("warming up...");
		for (Scenario.Client client : Scenario.Client.values()) {
			run(new Scenario("warm-up", client, null, 50), 1_000);
		}
	}

	private static OutageResult run(Scenario scenario, int outageRequests) {
		try (StubProvider primary = new StubProvider("primary", NORMAL_LATENCY, SLOW_FIRST_TOKEN, mode(scenario), true);
				StubProvider backup = new StubProvider("backup", NORMAL_LATENCY, FailureMode.HANG, true);
				Endpoints endpoints = new Endpoints()) {
			List<long[]> transitions = new ArrayList<>();
			List<WatchedClient> watched = new ArrayList<>();
			List<ConnectionProvider> pools = new ArrayList<>();
			Supplier<Mono<OutageResult.Reply>> call = client(scenario, primary, backup, endpoints, transitions, watched, pools);
			long before = BEFORE.toNanos() / INTERVAL_NANOS;
			long after = scenario.quiet() ? 0 : AFTER.toNanos() / INTERVAL_NANOS;
			int total = (int) (before + outageRequests + after);
			long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
			long outageStart = start + before * INTERVAL_NANOS;
			long outageEnd = outageStart + outageRequests * INTERVAL_NANOS;
			if (scenario.mode() != null) {
				primary.outage(new Outage(outageStart, outageEnd));
			}
			AtomicLong recovered = new AtomicLong(outageEnd);
			if (scenario.recovery() == Scenario.Recovery.UNLUCKY && !watched.isEmpty()) {
				long from = outageEnd - scaled(Duration.ofSeconds(45)).toNanos();
				watched.get(0).breaker().getEventPublisher().onStateTransition((event) -> {
					long now = System.nanoTime();
					if (event.getStateTransition().getToState() == CircuitBreaker.State.HALF_OPEN && now >= from
							&& recovered.compareAndSet(outageEnd, now + scaled(Duration.ofSeconds(1)).toNanos())) {
						primary.outage(new Outage(outageStart, recovered.get()));
					}
				});
			}
			long[] scheduled = new long[total];
			long[] waits = new long[total];
			long[] lags = new long[total];
			OutageResult.Reply[] replies = new OutageResult.Reply[total];
			CountDownLatch done = new CountDownLatch(total);
			for (int i = 0; i < total; i++) {
				long target = start + i * INTERVAL_NANOS;
				scheduled[i] = target;
				parkUntil(target);
				int index = i;
				lags[i] = System.nanoTime() - target;
				call.get().subscribe((reply) -> {
					waits[index] = System.nanoTime() - target;
					replies[index] = reply;
					done.countDown();
				}, (error) -> {
					waits[index] = System.nanoTime() - target;
					replies[index] = new OutageResult.Reply(OutageResult.Answer.FAILED, error.getClass().getSimpleName());
					done.countDown();
				});
			}
			boolean finished = done.await(Math.max(10_000, scaled(Duration.ofSeconds(1000)).toMillis()), TimeUnit.MILLISECONDS);
			// a quiet run watches the breaker for as long as the others send traffic after the outage
			parkUntil(outageEnd + AFTER.toNanos());
			pools.forEach(ConnectionProvider::dispose);
			List<WatchedClient.Send> sends = watched.isEmpty() ? List.of() : watched.get(0).sends();
			return new OutageResult(scenario, finished, outageStart, recovered.get(), scheduled, waits, lags, replies,
					primary.arrivals(), backup.arrivals(), copy(transitions), sends);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Park until {@code target} on {@link System#nanoTime()}'s clock (the soak's open loop too). */
	static void parkUntil(long target) {
		for (long now = System.nanoTime(); now < target; now = System.nanoTime()) {
			LockSupport.parkNanos(target - now);
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
	 * The scenario's client. For the gateway, the primary's transport is a {@link WatchedClient}
	 * (into {@code watched}), and the breaker's transitions are noted (into {@code transitions}).
	 */
	private static Supplier<Mono<OutageResult.Reply>> client(Scenario scenario, StubProvider primary, StubProvider backup,
			Endpoints endpoints, List<long[]> transitions, List<WatchedClient> watched, List<ConnectionProvider> pools) {
		switch (scenario.client()) {
			case NAIVE: {
				ConnectionProvider pool = RawClient.pool("naive", 4096);
				pools.add(pool);
				RawClient naive = new RawClient(primary.baseUrl(), pool);
				return () -> naive.chat()
					.timeout(NAIVE_TIMEOUT)
					.retryWhen(Retry.backoff(2, NAIVE_BACKOFF))
					.map((content) -> new OutageResult.Reply(OutageResult.Answer.PRIMARY, null));
			}
			case RAW_BACKUP: {
				ConnectionProvider pool = RawClient.pool("raw-backup", 4096);
				pools.add(pool);
				RawClient raw = new RawClient(backup.baseUrl(), pool);
				return () -> raw.chat().map((content) -> new OutageResult.Reply(OutageResult.Answer.BACKUP, null));
			}
			default: {
				List<LlmEndpoint> members = new ArrayList<>();
				if (scenario.client() != Scenario.Client.GATEWAY_BACKUP) {
					AtomicReference<CircuitBreaker> breaker = new AtomicReference<>();
					LlmEndpoint endpoint = endpoints.http(
							Endpoints.settings("primary", primary.baseUrl(), SCALE, scenario.bulkhead()), (client) -> {
								WatchedClient wrapped = new WatchedClient(client, breaker::get);
								watched.add(wrapped);
								return wrapped;
							});
					breaker.set(endpoint.circuitBreaker());
					endpoint.circuitBreaker().getEventPublisher().onStateTransition((event) -> {
						synchronized (transitions) {
							transitions.add(new long[] { System.nanoTime(),
									event.getStateTransition().getToState().ordinal() });
						}
					});
					members.add(endpoint);
				}
				if (scenario.client() != Scenario.Client.GATEWAY_PRIMARY) {
					members.add(endpoints.http(Endpoints.settings("backup", backup.baseUrl(), SCALE, scenario.bulkhead())));
				}
				LlmGateway gateway = Endpoints.gateway(
						Map.of("default", members.stream().map(LlmEndpoint::name).toList()),
						Duration.ofMillis(scenario.deadlineMillis()),
						members.toArray(new LlmEndpoint[0]));
				return () -> gateway.chat(REQUEST).map(OutageResult.Reply::of);
			}
		}
	}

}
