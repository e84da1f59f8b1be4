package dev.llmresilience.benchmarks;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import java.util.stream.Stream;
import java.util.zip.DataFormatException;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import dev.llmresilience.benchmarks.StubProvider.FailureMode;
import dev.llmresilience.benchmarks.StubProvider.Outage;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.BenchmarkAccess;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.DeferredRequestFailedEvent;
import dev.llmresilience.gateway.LlmGateway;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;
import org.slf4j.LoggerFactory;
import reactor.core.scheduler.Schedulers;
import redis.embedded.RedisServer;

import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;

/**
 * A day's traffic in an hour: one application (the starter's auto-configuration, shared state on a
 * real redis-server, deferral on) takes {@code rate} calls a second, open loop, for {@code minutes}:
 * 80 % chat and 20 % streams on a route of a primary and a backup, a tenth of the chat deferrable on
 * a route of the primary alone. Both providers answer 5 % of requests with a 500 at random, and the
 * primary has an outage every {@code cycleMinutes}: a hang, then 500s, then a slow first token, in
 * turn. Every {@code sampleSeconds} it forces a full GC and reads what would grow if something
 * leaked: heap after the GC, live threads, open file descriptors (and by kind, {@link OpenFiles}),
 * connections open to the providers, tasks queued on Reactor's schedulers, the attempts' timers
 * (which wait in the engine's own queue), Redis keys (and by pattern, from {@code SCAN}), the
 * deferred stream's length, deferred requests pending, and the log's WARN and ERROR lines by kind.
 * At the end it stops sending, waits for every call and every ticket to end, and checks:
 * every call answered once, every ticket ended once, nothing in flight left (bulkhead permits,
 * connections in use, timers, pending deferred requests, descriptors), and the figures of the last
 * {@code window} minutes against the first {@code window} after {@code warmupMinutes}: heap less
 * the pooled connections' share within 10 %, no more threads, descriptors besides the providers'
 * established connections, connections, Redis keys besides the deferred requests' or stream entries
 * than then (with a small slack, printed), p99 within 10 % (checked only with
 * {@code -Dp99Check=true}, the one-hour run's default: in a five-minute run the windows hold too few
 * outages to compare); and at every sample, no more deferred requests' keys in Redis than tickets
 * open or ended within the retention. The figures that vary with when the outages fell (the pooled
 * connections, their descriptors and heap; the deferred requests kept for their retention) are
 * judged by what explains them, not by two windows. It exits 1 if a check fails, and
 * {@code .ci/run} runs the five-minute version after the tests.
 *
 * <p>System properties: {@code minutes} (60), {@code rate} (500), {@code warmupMinutes} (5),
 * {@code window} (10), {@code cycleMinutes} (5), {@code outageSeconds} (60, starting
 * {@code cycleMinutes/5} into each cycle), {@code errorRate} (0.05), {@code sampleSeconds} (60),
 * {@code deferralDelaySeconds} (15), {@code retentionSeconds} (300: how long an ended deferred
 * request's outcome stays in Redis; with the default hour, keys would grow all run by design),
 * {@code bulkhead} (1000), {@code endOrder} (false: the breakers count calls in the order they start; true: as they end),
 * {@code window100} (false: the breakers' built-in window and minimum of 20; true: 100 and 100),
 * {@code log} (target/soak.log: every WARN and ERROR line), {@code seed} (1), {@code inject} (none).
 */
public final class Soak {

	/** The providers' time to a whole answer (first token at half of it). */
	private static final Duration NORMAL = Duration.ofMillis(400);

	private static final Duration SLOW_FIRST_TOKEN = Duration.ofSeconds(20);

	private static final FailureMode[] OUTAGES = { FailureMode.HANG, FailureMode.HTTP_500, FailureMode.SLOW_FIRST_TOKEN };

	private static final ChatRequest CHAT = ChatRequest.ofUser("Hello");

	private static final ChatRequest DEFERRABLE = ChatRequest.builder().user("Summarise this").route("solo").deferrable(true).build();

	/** The executors of Reactor's schedulers, where the gateway sets its timers. */
	private static final List<ScheduledThreadPoolExecutor> EXECUTORS = new CopyOnWriteArrayList<>();

	/**
	 * {@code -Dinject}: a leak put in on purpose, to see the checks fail: {@code heap} (every chat
	 * answer kept), {@code stuck-stream} (one stream in 1,000 read to its first chunk and no further),
	 * {@code fd} (a pipe opened every 5,000 calls and never closed: two descriptors every 10 s),
	 * {@code redis-keys} (for one ended deferred request in ten, a key of the same pattern as its own
	 * written without expiry, as if an outcome were kept for good).
	 */
	private static final String INJECT = System.getProperty("inject", "");

	private static final List<Object> HELD = java.util.Collections.synchronizedList(new ArrayList<>());

	/** For {@code -Dinject=redis-keys}: where the kept-for-good keys are written. */
	private static final java.util.concurrent.atomic.AtomicReference<io.lettuce.core.api.async.RedisAsyncCommands<String, String>> LEAK_REDIS = new java.util.concurrent.atomic.AtomicReference<>();

	private Soak() {
	}

	public static void main(String[] args) throws Exception {
		// before any scheduler is made: keep each executor Reactor's schedulers run on, to count their timers
		Schedulers.addExecutorServiceDecorator("soak-timers", (scheduler, service) -> {
			if (service instanceof ScheduledThreadPoolExecutor executor) {
				EXECUTORS.add(executor);
			}
			return service;
		});
		Settings settings = Settings.fromSystemProperties();
		Machine.describe("Soak: " + settings);
		LogCount logs = LogCount.install(Path.of(System.getProperty("log", "target/soak.log")));
		int redisPort = FleetSupport.freePort();
		RedisServer redis = FleetSupport.redis(redisPort);
		int failures;
		try (StubProvider primary = new StubProvider("primary", NORMAL, SLOW_FIRST_TOKEN, FailureMode.HANG, false);
				StubProvider backup = new StubProvider("backup", NORMAL, FailureMode.HANG, false)) {
			primary.errorRate(settings.errorRate());
			backup.errorRate(settings.errorRate());
			Tickets tickets = new Tickets(TimeUnit.SECONDS.toNanos(settings.retentionSeconds()));
			AnnotationConfigApplicationContext context = FleetSupport.replica(properties(settings, redisPort, primary, backup),
					List.of((ApplicationListener<DeferredRequestCompletedEvent>) (event) -> tickets.ended(event.getTicket(), true),
							(ApplicationListener<DeferredRequestFailedEvent>) (event) -> tickets.failed(event.getTicket(), event.getReason())));
			RedisClient client = RedisClient.create(RedisURI.create("127.0.0.1", redisPort));
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				LEAK_REDIS.set(connection.async());
				Probe probe = new Probe(context, connection.sync(), List.of(primary, backup), logs, tickets,
						new OpenFiles(java.util.Set.of(primary.port(), backup.port()), redisPort));
				Load load = new Load(context.getBean(LlmGateway.class), tickets, settings);
				for (LlmEndpoint endpoint : context.getBean(EndpointRegistry.class).endpoints()) {
					endpoint.circuitBreaker().getEventPublisher().onError((event) -> load.breakerError(endpoint.name() + " "
							+ event.getThrowable().getClass().getSimpleName() + ": " + LogCount.kind(event.getThrowable().getMessage())));
				}
				failures = run(settings, load, tickets, probe, primary);
			}
			finally {
				client.shutdown();
				context.close();
			}
		}
		finally {
			FleetSupport.stop(redis);
		}
		System.out.println("load avg at end: " + Machine.loadAverage());
		System.exit((failures == 0) ? 0 : 1);
	}

	private static int run(Settings settings, Load load, Tickets tickets, Probe probe, StubProvider primary)
			throws InterruptedException {
		List<Sample> samples = new ArrayList<>();
		System.out.println();
		System.out.println(Sample.HEADER);
		Sample before = probe.sample(0, load);
		System.out.println(before.row() + "   (before the load)");
		System.out.println(before.kinds());
		long start = System.nanoTime();
		long end = start + TimeUnit.MINUTES.toNanos(settings.minutes());
		Thread sender = new Thread(() -> load.send(start, end, primary), "soak-load");
		sender.start();
		long next = start + TimeUnit.SECONDS.toNanos(settings.sampleSeconds());
		while (next <= end) {
			OutageReplay.parkUntil(next);
			Sample sample = probe.sample((next - start) / 1e9, load);
			samples.add(sample);
			System.out.println(sample.row());
			System.out.println(sample.kinds());
			next += TimeUnit.SECONDS.toNanos(settings.sampleSeconds());
		}
		sender.join();
		System.out.printf(Locale.ROOT, "%nsent %d calls; draining (load avg %s)%n", load.sent.get(), Machine.loadAverage());
		long drainBy = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
		while (load.outstanding.get() > 0 && System.nanoTime() < drainBy) {
			Thread.sleep(200);
		}
		// the deferred queue's last attempts: delay, twice it, four times it, after the last was queued
		long ticketsBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(settings.deferralDelaySeconds() * 8L + 30);
		while (tickets.open() > 0 && System.nanoTime() < ticketsBy) {
			Thread.sleep(500);
		}
		Thread.sleep(2000);
		tickets.openTickets().stream().limit(5).forEach((ticket) -> System.out.println("ticket still open: "
				+ load.gateway.deferred(ticket).map(Object::toString).onErrorResume((ex) -> reactor.core.publisher.Mono.just(ex.toString()))
					.block(Duration.ofSeconds(5))));
		Sample drained = probe.sample((System.nanoTime() - start) / 1e9, load);
		System.out.println(drained.row() + "   (drained)");
		System.out.println(drained.kinds());
		return Checks.report(settings, samples, drained, load, tickets, probe.logs);
	}

	static Map<String, Object> properties(Settings settings, int redisPort, StubProvider primary, StubProvider backup) {
		Map<String, Object> properties = FleetSupport.shared(redisPort, "soak-a");
		properties.put("llm.shared-state.key-prefix", "soak:");
		properties.put("llm.endpoints.primary.base-url", primary.baseUrl());
		properties.put("llm.endpoints.primary.model", "primary-model");
		properties.put("llm.endpoints.backup.base-url", backup.baseUrl());
		properties.put("llm.endpoints.backup.model", "backup-model");
		properties.put("llm.endpoints.backup.priority", 1);
		// 500 calls/s of 0.4 s each are 200 in flight; a hang holds calls until it is known, and an open
		// hands them all to the backup at once
		properties.put("llm.defaults.bulkhead.max-concurrent-calls", Integer.getInteger("bulkhead", 1000));
		// The breakers at the built-in defaults (a window of 20). At 500 calls/s the 5 % of calls that
		// fail at once end before any success (0.4 s): counted in the order they end, they opened a
		// backup that traffic moved to, and reopened a primary as soon as it closed; counted in the
		// order they start, they do not (docs/configuration.md, "The window counts calls in the order
		// they started"). -DendOrder counts them as they end, to see it; -Dwindow100 sets the window
		// and minimum of 100 of the runs before that
		if (Boolean.getBoolean("endOrder")) {
			properties.put("llm.defaults.circuit-breaker.start-order-wait", "0ms");
		}
		if (Boolean.getBoolean("window100")) {
			properties.put("llm.defaults.circuit-breaker.sliding-window-size", 100);
			properties.put("llm.defaults.circuit-breaker.minimum-number-of-calls", 100);
		}
		properties.put("llm.routes.default", "primary,backup");
		properties.put("llm.routes.solo", "primary");
		properties.put("llm.gateway.deferral.enabled", true);
		properties.put("llm.gateway.deferral.delay", settings.deferralDelaySeconds() + "s");
		properties.put("llm.gateway.deferral.retention", settings.retentionSeconds() + "s");
		properties.put("llm.gateway.deferral.capacity", 5000);
		return properties;
	}

	static byte[] compress(Histogram histogram) {
		ByteBuffer buffer = ByteBuffer.allocate(histogram.getNeededByteBufferCapacity());
		int length = histogram.encodeIntoCompressedByteBuffer(buffer);
		return Arrays.copyOf(buffer.array(), length);
	}

	static Histogram decompress(byte[] bytes) {
		try {
			return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(bytes), 0);
		}
		catch (DataFormatException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/** One more of {@code kind} in a count by kind. */
	static void increment(Map<String, LongAdder> counts, String kind) {
		counts.computeIfAbsent(kind, (key) -> new LongAdder()).increment();
	}

	/** A count by kind, a line each in the order of the kinds, with {@code format} (kind, count). */
	static void print(Map<String, LongAdder> counts, String format) {
		counts.entrySet()
			.stream()
			.sorted(Map.Entry.comparingByKey())
			.forEach((entry) -> System.out.printf(Locale.ROOT, format, entry.getKey(), entry.getValue().sum()));
	}

	/** The run's settings, from system properties. */
	record Settings(int minutes, int rate, int warmupMinutes, int window, int cycleMinutes, int outageSeconds,
			double errorRate, int sampleSeconds, int deferralDelaySeconds, int retentionSeconds, boolean p99Check,
			long seed) {

		static Settings fromSystemProperties() {
			int minutes = Integer.getInteger("minutes", 60);
			return new Settings(minutes, Integer.getInteger("rate", 500), Integer.getInteger("warmupMinutes", 5),
					Integer.getInteger("window", 10), Integer.getInteger("cycleMinutes", 5),
					Integer.getInteger("outageSeconds", 60),
					Double.parseDouble(System.getProperty("errorRate", "0.05")), Integer.getInteger("sampleSeconds", 60),
					Integer.getInteger("deferralDelaySeconds", 15), Integer.getInteger("retentionSeconds", 300),
					Boolean.parseBoolean(System.getProperty("p99Check", Boolean.toString(minutes >= 30))),
					Long.getLong("seed", 1));
		}

		@Override
		public String toString() {
			return String.format(Locale.ROOT,
					"%d min at %d calls/s (80 %% chat, 20 %% streams, 10 %% of all deferrable on the primary alone), "
							+ "%.0f %% provider errors, an outage of the primary every %d min for %d s (hang, 500s, slow first token "
							+ "in turn), warm-up %d min, windows of %d min compared, a sample every %d s; deferral delay %d s, "
							+ "retention %d s; p99 checked: %b",
					this.minutes, this.rate, this.errorRate * 100, this.cycleMinutes, this.outageSeconds,
					this.warmupMinutes, this.window, this.sampleSeconds, this.deferralDelaySeconds,
					this.retentionSeconds, this.p99Check);
		}

	}

	/** The open-loop load: one call every 1/rate s, whatever became of the calls before it. */
	static final class Load {

		final AtomicLong sent = new AtomicLong();

		final AtomicLong outstanding = new AtomicLong();

		/** A call's terminal signal seen more than once (a Reactor contract broken). */
		final AtomicLong answeredTwice = new AtomicLong();

		final Map<String, LongAdder> outcomes = new ConcurrentHashMap<>();

		/** Chat calls' attempts by endpoint and outcome. */
		final Map<String, LongAdder> attempts = new ConcurrentHashMap<>();

		final LongAdder chunks = new LongAdder();

		final Recorder chat = new Recorder(TimeUnit.MINUTES.toNanos(10), 3);

		final Recorder streams = new Recorder(TimeUnit.MINUTES.toNanos(10), 3);

		final LlmGateway gateway;

		private final Tickets tickets;

		private final Settings settings;

		Load(LlmGateway gateway, Tickets tickets, Settings settings) {
			this.gateway = gateway;
			this.tickets = tickets;
			this.settings = settings;
		}

		void send(long start, long end, StubProvider primary) {
			SplittableRandom random = new SplittableRandom(this.settings.seed());
			long interval = TimeUnit.SECONDS.toNanos(1) / this.settings.rate();
			long cycle = TimeUnit.MINUTES.toNanos(this.settings.cycleMinutes());
			long cycleIndex = -1;
			for (long i = 0;; i++) {
				long target = start + i * interval;
				if (target >= end) {
					return;
				}
				long index = (target - start) / cycle;
				if (index != cycleIndex) {
					cycleIndex = index;
					long outageStart = start + index * cycle + cycle / 5;
					primary.mode(OUTAGES[(int) (index % OUTAGES.length)]);
					primary.outage(new Outage(outageStart, outageStart + TimeUnit.SECONDS.toNanos(this.settings.outageSeconds())));
				}
				OutageReplay.parkUntil(target);
				double draw = random.nextDouble();
				if (INJECT.equals("fd") && (this.sent.get() % 5000) == 0) {
					try {
						HELD.add(java.nio.channels.Pipe.open());
					}
					catch (IOException ex) {
						throw new UncheckedIOException(ex);
					}
				}
				this.sent.incrementAndGet();
				this.outstanding.incrementAndGet();
				if (draw < 0.2) {
					stream(target);
				}
				else {
					chat((draw < 0.3) ? DEFERRABLE : CHAT, target);
				}
			}
		}

		private void chat(ChatRequest request, long target) {
			AtomicInteger ends = new AtomicInteger();
			this.gateway.chat(request).subscribe((response) -> {
				if (ends.incrementAndGet() > 1) {
					this.answeredTwice.incrementAndGet();
					return;
				}
				if (INJECT.equals("heap")) {
					HELD.add(response);
				}
				if (response.tier() == Tier.DEFERRED && response.ticket() != null) {
					this.tickets.given(response.ticket());
				}
				this.chat.recordValue(Math.max(0, System.nanoTime() - target));
				count("chat " + response.tier());
				response.attempts().forEach((attempt) -> countAttempt(attempt.endpoint() + " " + attempt.outcome()));
				this.outstanding.decrementAndGet();
			}, (error) -> {
				if (ends.incrementAndGet() > 1) {
					this.answeredTwice.incrementAndGet();
					return;
				}
				this.chat.recordValue(Math.max(0, System.nanoTime() - target));
				count("chat error " + error.getClass().getSimpleName());
				this.outstanding.decrementAndGet();
			});
		}

		private void stream(long target) {
			AtomicInteger ends = new AtomicInteger();
			AtomicLong first = new AtomicLong();
			Tier[] tier = new Tier[1];
			if (INJECT.equals("stuck-stream") && (this.sent.get() % 1000) == 0) {
				// a caller that takes the first chunk and never asks for more: its call never ends
				this.gateway.stream(CHAT).subscribe(new reactor.core.publisher.BaseSubscriber<ChatChunk>() {
					@Override
					protected void hookOnSubscribe(org.reactivestreams.Subscription subscription) {
						subscription.request(1);
					}
				});
				return;
			}
			this.gateway.stream(CHAT).subscribe((chunk) -> {
				this.chunks.increment();
				if (tier[0] == null) {
					tier[0] = chunk.tier();
					first.set(System.nanoTime());
				}
			}, (error) -> {
				if (ends.incrementAndGet() > 1) {
					this.answeredTwice.incrementAndGet();
					return;
				}
				this.streams.recordValue(Math.max(0, System.nanoTime() - target));
				count("stream error " + error.getClass().getSimpleName() + ((tier[0] != null) ? " after tokens" : ""));
				this.outstanding.decrementAndGet();
			}, () -> {
				if (ends.incrementAndGet() > 1) {
					this.answeredTwice.incrementAndGet();
					return;
				}
				this.streams.recordValue(Math.max(0, System.nanoTime() - target));
				count("stream " + ((tier[0] != null) ? tier[0] : "empty"));
				this.outstanding.decrementAndGet();
			});
		}

		/** What each breaker counted as a failure, by endpoint and exception. */
		final Map<String, LongAdder> breakerErrors = new ConcurrentHashMap<>();

		void breakerError(String kind) {
			increment(this.breakerErrors, kind);
		}

		private void countAttempt(String outcome) {
			increment(this.attempts, outcome);
		}

		private void count(String outcome) {
			increment(this.outcomes, outcome);
		}

	}

	/**
	 * Every ticket given and not yet ended, and the tickets ended in the last 10 minutes, or the
	 * retention and a minute if longer (to catch a second end, and to know how many ended requests
	 * Redis should still hold; older ones are let go, so that the run's own record does not grow with
	 * its length).
	 */
	static final class Tickets {

		private final long retention;

		private final long keepEnded;

		Tickets(long retention) {
			this.retention = retention;
			this.keepEnded = Math.max(TimeUnit.MINUTES.toNanos(10), retention + TimeUnit.MINUTES.toNanos(1));
		}

		private final Map<String, Boolean> open = new ConcurrentHashMap<>();

		private final Map<String, Long> ended = new ConcurrentHashMap<>();

		final LongAdder given = new LongAdder();

		final LongAdder completed = new LongAdder();

		final LongAdder failed = new LongAdder();

		final LongAdder endedTwice = new LongAdder();

		/** The failed tickets' reasons, by kind (numbers and quoted parts left out). */
		final Map<String, LongAdder> failures = new ConcurrentHashMap<>();

		void given(String ticket) {
			this.given.increment();
			// an end may come before the DEFERRED answer is seen here
			if (!this.ended.containsKey(ticket)) {
				this.open.put(ticket, Boolean.TRUE);
				if (this.ended.containsKey(ticket)) {
					this.open.remove(ticket);
				}
			}
		}

		void failed(String ticket, String reason) {
			increment(this.failures, LogCount.kind(reason));
			ended(ticket, false);
		}

		void ended(String ticket, boolean completed) {
			(completed ? this.completed : this.failed).increment();
			if (INJECT.equals("redis-keys") && LEAK_REDIS.get() != null && (this.completed.sum() % 10) == 0) {
				LEAK_REDIS.get().set("soak:deferred:" + ticket + "-kept", "leaked");
			}
			if (this.ended.putIfAbsent(ticket, System.nanoTime()) != null) {
				this.endedTwice.increment();
			}
			this.open.remove(ticket);
		}

		/** Let go of the tickets ended longer ago than they are kept. */
		void purge() {
			long before = System.nanoTime() - this.keepEnded;
			this.ended.values().removeIf((at) -> at < before);
		}

		long given() {
			return this.given.sum();
		}

		long open() {
			return this.open.size();
		}

		List<String> openTickets() {
			return List.copyOf(this.open.keySet());
		}

		/**
		 * How many deferred requests Redis should hold now: those open, and those ended within the
		 * retention (an ended request's outcome is kept that long from its end, which comes just
		 * before its event here).
		 */
		long kept() {
			long since = System.nanoTime() - this.retention;
			return this.open.size() + this.ended.values().stream().filter((at) -> at >= since).count();
		}

		long endedMoreThanOnce() {
			return this.endedTwice.sum();
		}

	}

	/** Reads what would grow if something leaked. */
	static final class Probe {

		private final AnnotationConfigApplicationContext context;

		private final RedisCommands<String, String> redis;

		private final List<StubProvider> providers;

		final LogCount logs;

		private final Tickets tickets;

		private final OpenFiles openFiles;

		private long lastChat;

		private long lastStream;

		private long lastSent;

		private double lastSeconds;

		Probe(AnnotationConfigApplicationContext context, RedisCommands<String, String> redis, List<StubProvider> providers,
				LogCount logs, Tickets tickets, OpenFiles openFiles) {
			this.context = context;
			this.openFiles = openFiles;
			this.tickets = tickets;
			this.redis = redis;
			this.providers = providers;
			this.logs = logs;
		}

		Sample sample(double seconds, Load load) {
			// kept compressed (about a kilobyte, not the 250 KB of a histogram), so that the run's own
			// record of its latencies does not grow the heap it measures
			byte[] chat = compress(load.chat.getIntervalHistogram());
			byte[] streams = compress(load.streams.getIntervalHistogram());
			this.tickets.purge();
			long sent = load.sent.get();
			double rate = (sent - this.lastSent) / Math.max(1e-9, seconds - this.lastSeconds);
			this.lastSent = sent;
			this.lastSeconds = seconds;
			System.gc();
			long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
			int threads = ManagementFactory.getThreadMXBean().getThreadCount();
			long connections = this.providers.stream().mapToLong(StubProvider::openConnections).sum();
			// the scheduler's queues, and the attempts' timers, which wait in the engine's own queue
			long timers = EXECUTORS.stream().mapToLong((executor) -> executor.getQueue().size()).sum();
			long attemptTimers = BenchmarkAccess.attemptTimersPending();
			long keys = this.redis.dbsize();
			Map<String, Long> keyKinds = keyKinds(this.redis);
			long keptExpected = this.tickets.kept();
			Map<String, Long> fdKinds = this.openFiles.byKind();
			long stream = this.redis.exists("soak:deferred") > 0 ? this.redis.xlen("soak:deferred") : 0;
			int pending = BenchmarkAccess.deferredPending(this.context);
			int inUse = 0;
			for (LlmEndpoint endpoint : this.context.getBean(EndpointRegistry.class).endpoints()) {
				inUse += endpoint.bulkhead().getBulkheadConfig().getMaxConcurrentCalls()
						- endpoint.bulkhead().getMetrics().getAvailableConcurrentCalls();
			}
			return new Sample(seconds, Machine.loadAverage().split(" ")[0], rate, chat, streams, heap, threads,
					descriptors(), connections, timers, attemptTimers, keys, stream, pending, inUse, load.outstanding.get(),
					this.logs.warns(), this.logs.errors(), fdKinds, keyKinds, keptExpected);
		}

		/** Redis keys by pattern: a key's numbers read N, its digests (16 or more letters and digits) *. */
		static Map<String, Long> keyKinds(RedisCommands<String, String> redis) {
			Map<String, Long> kinds = new java.util.TreeMap<>();
			io.lettuce.core.ScanCursor cursor = io.lettuce.core.ScanCursor.INITIAL;
			do {
				io.lettuce.core.KeyScanCursor<String> page = redis.scan(cursor, io.lettuce.core.ScanArgs.Builder.limit(1000));
				for (String key : page.getKeys()) {
					kinds.merge(pattern(key), 1L, Long::sum);
				}
				cursor = page;
			}
			while (!cursor.isFinished());
			return kinds;
		}

		static String pattern(String key) {
			StringBuilder pattern = new StringBuilder();
			for (String part : key.split(":", -1)) {
				if (!pattern.isEmpty()) {
					pattern.append(':');
				}
				pattern.append(part.matches("\\d+") ? "N" : part.matches("[A-Za-z0-9_-]{16,}") ? "*" : part);
			}
			return pattern.toString();
		}

		private static long descriptors() {
			try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
				return fds.count();
			}
			catch (IOException ex) {
				return -1;
			}
		}

	}

	/** One sample: the last interval's latencies and rate, and what was held at its end. */
	record Sample(double seconds, String load, double rate, byte[] chat, byte[] streams, long heap, int threads,
			long descriptors, long connections, long timers, long attemptTimers, long keys, long stream, int pending,
			int inUse,
			long outstanding, long warns, long errors, Map<String, Long> fdKinds, Map<String, Long> keyKinds,
			long keptExpected) {

		/** The Redis keys of deferred requests, one a request ({@code soak:deferred:<digest>}). */
		static final String DEFERRED_KEYS = "soak:deferred:*";

		/** Descriptors besides the providers' connections: the kinds a leak would grow. */
		long otherDescriptors() {
			return OpenFiles.besidesProviders(this.fdKinds);
		}

		/** The providers' connections not ESTABLISHED: one end closed, the other not yet (or never). */
		long halfClosed() {
			return OpenFiles.providersNotEstablished(this.fdKinds);
		}

		long deferredKeys() {
			return this.keyKinds.getOrDefault(DEFERRED_KEYS, 0L);
		}

		/** Redis keys besides the deferred requests': the stream, the replicas, the breakers' state. */
		long otherKeys() {
			return this.keyKinds.values().stream().mapToLong(Long::longValue).sum() - deferredKeys();
		}

		static final String HEADER = String.format(Locale.ROOT,
				"%7s %5s %6s %8s %8s %8s %8s %8s %7s %5s %5s %5s %6s %6s %5s %6s %6s %6s %6s %6s", "t (s)", "load", "calls/s",
				"chat p50", "chat p99", "strm p50", "strm p99", "max (ms)", "heap MB", "thrds", "fds", "conns", "timers",
				"attmpt",
				"keys", "xlen", "defer", "in use", "warns", "errors");

		String row() {
			return String.format(Locale.ROOT,
					"%7.0f %5s %6.0f %8.1f %8.1f %8.1f %8.1f %8.0f %7.1f %5d %5d %5d %6d %6d %5d %6d %6d %6d %6d %6d",
					this.seconds, this.load, this.rate, ms(chatHistogram(), 50), ms(chatHistogram(), 99),
					ms(streamHistogram(), 50), ms(streamHistogram(), 99),
					Math.max(chatHistogram().getMaxValue(), streamHistogram().getMaxValue()) / 1e6,
					this.heap / (1024.0 * 1024), this.threads, this.descriptors, this.connections, this.timers,
					this.attemptTimers, this.keys,
					this.stream, this.pending, this.inUse, this.warns, this.errors);
		}

		/** The descriptors by kind and the Redis keys by pattern, on one line each. */
		String kinds() {
			return "          fds: " + joined(this.fdKinds) + System.lineSeparator() + "          keys: " + joined(this.keyKinds)
					+ " (tickets open or ended within the retention: " + this.keptExpected + ")";
		}

		private static String joined(Map<String, Long> counts) {
			StringBuilder line = new StringBuilder();
			counts.forEach((kind, count) -> line.append(line.isEmpty() ? "" : ", ").append(kind).append(' ').append(count));
			return line.toString();
		}

		Histogram chatHistogram() {
			return decompress(this.chat);
		}

		Histogram streamHistogram() {
			return decompress(this.streams);
		}

		static double ms(Histogram histogram, double percentile) {
			return (histogram.getTotalCount() == 0) ? 0 : histogram.getValueAtPercentile(percentile) / 1e6;
		}

	}

	/** The checks at the end, printed one per line, with the number that failed. */
	static final class Checks {

		private Checks() {
		}

		static int report(Settings settings, List<Sample> samples, Sample drained, Load load, Tickets tickets,
				LogCount logs) {
			System.out.println();
			System.out.println("outcomes:");
			print(load.outcomes, "  %-40s %,10d%n");
			System.out.printf(Locale.ROOT, "  %-40s %,10d%n", "stream chunks", load.chunks.sum());
			System.out.println("failures the breakers counted:");
			print(load.breakerErrors, "  %2$,10d  %1$s%n");
			System.out.println("chat calls' attempts:");
			print(load.attempts, "  %-40s %,10d%n");
			System.out.printf(Locale.ROOT, "tickets: %d given, %d completed, %d failed, %d open, %d ended twice%n",
					tickets.given(), tickets.completed.sum(), tickets.failed.sum(), tickets.open(), tickets.endedMoreThanOnce());
			print(tickets.failures, "  failed: %2$,d  %1$s%n");
			System.out.println("log lines by kind:");
			logs.kinds().forEach((kind, count) -> System.out.printf(Locale.ROOT, "  %,8d  %s%n", count, kind));
			System.out.println();
			long sampleSeconds = settings.sampleSeconds();
			long firstFrom = settings.warmupMinutes() * 60L;
			int window = Math.min(settings.window(), Math.max(1, (settings.minutes() - settings.warmupMinutes()) / 2));
			List<Sample> first = samples.stream()
				.filter((sample) -> sample.seconds() > firstFrom && sample.seconds() <= firstFrom + window * 60L + 0.5)
				.toList();
			List<Sample> last = samples.stream()
				.filter((sample) -> sample.seconds() > settings.minutes() * 60L - window * 60L + 0.5 - sampleSeconds / 2.0)
				.toList();
			System.out.printf(Locale.ROOT, "windows: first %d samples (%.0f-%.0f s), last %d samples (%.0f-%.0f s)%n",
					first.size(), first.isEmpty() ? 0 : first.get(0).seconds(), first.isEmpty() ? 0 : first.get(first.size() - 1).seconds(),
					last.size(), last.isEmpty() ? 0 : last.get(0).seconds(), last.isEmpty() ? 0 : last.get(last.size() - 1).seconds());
			List<String> failed = new ArrayList<>();
			check(failed, "every call answered", load.outstanding.get() == 0, load.outstanding.get() + " unanswered of " + load.sent.get());
			check(failed, "every call answered once", load.answeredTwice.get() == 0, load.answeredTwice.get() + " answered twice");
			check(failed, "every ticket ended", tickets.open() == 0, tickets.open() + " of " + tickets.given() + " open");
			check(failed, "every ticket ended once", tickets.endedMoreThanOnce() == 0, tickets.endedMoreThanOnce() + " ended twice or more");
			check(failed, "no ERROR logged", logs.errors() == 0, logs.errors() + " ERROR lines");
			check(failed, "drained: no bulkhead permit held", drained.inUse() == 0, drained.inUse() + " held");
			check(failed, "drained: no deferred request pending", drained.pending() <= 0, drained.pending() + " pending");
			check(failed, "drained: deferred stream empty", drained.stream() == 0, drained.stream() + " entries");
			// an attempt's timer ends with it; the scheduler then holds periodic work (probes, heartbeats,
			// deferred requests' next attempts) and the attempt queue's wake-ups armed for timers since
			// disposed, each gone by its time
			check(failed, "drained: no attempt timer left", drained.attemptTimers() == 0,
					drained.attemptTimers() + " queued");
			check(failed, "drained: scheduler tasks back to a handful (at most 64)", drained.timers() <= 64,
					drained.timers() + " queued");
			check(failed, "drained: no connection to the providers left in use beyond the pools' idle ones",
					drained.connections() <= last.stream().mapToLong(Sample::connections).max().orElse(Long.MAX_VALUE),
					drained.connections() + " open");
			if (!first.isEmpty() && !last.isEmpty()) {
				double heapFirst = mean(first, Sample::heap);
				double heapLast = mean(last, Sample::heap);
				// The heap after a full GC holds each pooled connection to a provider (both ends here,
				// about 8-11 KB), and the pools keep between a hundred and 1,400 of them depending on
				// when the outages fell and when idle ones were let go: one run read -12.3 % and the
				// next +10.5 % with nothing kept. So the connections' share is taken out: a least-squares
				// fit of heap = a + b connections + c time over the samples after warm-up gives b (the
				// time term keeps a leak from being read as connections), and the last window's
				// heap - b connections must be within 10 % of the first window's heap of the same.
				double perConnection = perConnection(samples.stream()
					.filter((sample) -> sample.seconds() > firstFrom)
					.toList());
				double adjustedFirst = mean(first, Sample::heap) - perConnection * mean(first, Sample::connections);
				double adjustedLast = mean(last, Sample::heap) - perConnection * mean(last, Sample::connections);
				check(failed, "heap after full GC less the providers' connections' share: last window within 10 % of the first's heap",
						adjustedLast - adjustedFirst <= heapFirst * 0.10,
						String.format(Locale.ROOT, "%.1f MiB against %.1f MiB (%+.1f %% of %.1f MiB; %.1f KB a connection, fitted)",
								adjustedLast / 1048576, adjustedFirst / 1048576, (adjustedLast - adjustedFirst) / heapFirst * 100,
								heapFirst / 1048576, perConnection / 1024));
				System.out.printf(Locale.ROOT, "  [info] heap after full GC as read, last window against the first: %.1f MiB against %.1f MiB (%+.1f %%)%n",
						heapLast / 1048576, heapFirst / 1048576, (heapLast / heapFirst - 1) * 100);
				grows(failed, "live threads", first, last, Sample::threads, 2);
				// Each connection to a provider is two descriptors here (both ends in this JVM), and the
				// pools keep what the busiest moment needed, up to their size (the bulkheads'): the
				// connections check below judges them. Every other descriptor is counted by kind (the
				// "fds:" lines): the event loops' epoll, eventfd and timerfd (three a loop, opened as the
				// first calls start the loops, before the first window), pipes, Redis's sockets, files and
				// jars. Subtracting twice the providers' count of connections instead left the
				// connections opened or closed between the two readings, up to 100 in one sample. A
				// provider's connection in any state but ESTABLISHED (one end closed, the other left
				// open) counts after the drain: at load 25, 111 were CLOSE_WAIT for a moment at an outage.
				long descriptorsFirst = first.stream().mapToLong(Sample::otherDescriptors).max().orElse(0);
				grows(failed, "open file descriptors besides the providers' connections", first, last,
						Sample::otherDescriptors, 8);
				check(failed, "drained: open file descriptors besides the providers' established connections at most the first window's highest + 8",
						drained.otherDescriptors() + drained.halfClosed() <= descriptorsFirst + 8,
						(drained.otherDescriptors() + drained.halfClosed()) + " against " + descriptorsFirst);
				System.out.printf(Locale.ROOT, "  [info] open file descriptors in all, last window's highest against the first's: %d against %d%n",
						last.stream().mapToLong(Sample::descriptors).max().orElse(0),
						first.stream().mapToLong(Sample::descriptors).max().orElse(0));
				long pools = 2L * Integer.getInteger("bulkhead", 1000);
				long firstMax = first.stream().mapToLong(Sample::connections).max().orElse(0);
				long lastMax = last.stream().mapToLong(Sample::connections).max().orElse(0);
				check(failed, "connections open to the providers: within the pools' size (" + pools
						+ ") or no growth", lastMax <= Math.max(firstMax + 4, pools), lastMax + " against " + firstMax);
				// Redis holds a hash per deferred request, from its deferral to the retention after its
				// end: their number follows the tickets of the last retention, so with when the outages
				// fell, not with the run's length. They are judged against what the run knows (tickets
				// open or ended within the retention) at every sample; the other keys must not grow.
				grows(failed, "Redis keys besides the deferred requests' (" + Sample.DEFERRED_KEYS + ")", first, last,
						Sample::otherKeys, 4);
				deferredKeys(failed, samples, drained);
				System.out.printf(Locale.ROOT, "  [info] Redis keys in all (DBSIZE), last window's highest against the first's: %d against %d%n",
						last.stream().mapToLong(Sample::keys).max().orElse(0), first.stream().mapToLong(Sample::keys).max().orElse(0));
				grows(failed, "deferred stream length", first, last, Sample::stream, 4);
				p99(failed, settings, "chat", first, last, Sample::chatHistogram);
				p99(failed, settings, "stream", first, last, Sample::streamHistogram);
			}
			else {
				check(failed, "the run is long enough to compare windows", false, "no samples to compare");
			}
			System.out.println((failed.isEmpty()) ? "SOAK PASSED" : "SOAK FAILED: " + String.join("; ", failed));
			return failed.size();
		}

		/**
		 * At every sample and after the drain, at most one deferred request's key per ticket open or
		 * ended within the retention, with a slack of 16 or 1 % (a request is in Redis a moment before
		 * its ticket is seen here).
		 */
		private static void deferredKeys(List<String> failed, List<Sample> samples, Sample drained) {
			Sample worst = drained;
			List<Sample> all = new ArrayList<>(samples);
			all.add(drained);
			for (Sample sample : all) {
				if (sample.deferredKeys() - allowed(sample) > worst.deferredKeys() - allowed(worst)) {
					worst = sample;
				}
			}
			check(failed, "Redis keys of deferred requests: at every sample and drained, at most one per ticket open or ended within the retention (+ 16 or 1 %)",
					worst.deferredKeys() <= allowed(worst),
					String.format(Locale.ROOT, "closest at %.0f s: %d keys against %d tickets", worst.seconds(),
							worst.deferredKeys(), worst.keptExpected()));
		}

		/**
		 * Heap bytes a connection to the providers, from the least-squares fit of heap = a + b
		 * connections + c seconds: b, within 0 and 32 KB (0 if the samples cannot tell).
		 */
		static double perConnection(List<Sample> samples) {
			double[][] normal = new double[3][4];
			for (Sample sample : samples) {
				double[] x = { 1, sample.connections(), sample.seconds() };
				for (int i = 0; i < 3; i++) {
					for (int j = 0; j < 3; j++) {
						normal[i][j] += x[i] * x[j];
					}
					normal[i][3] += x[i] * sample.heap();
				}
			}
			for (int pivot = 0; pivot < 3; pivot++) {
				if (normal[pivot][pivot] < 1) {
					return 0; // (after elimination) the sum of squared residuals: connections or time did not vary
				}
				for (int row = 0; row < 3; row++) {
					if (row != pivot) {
						double factor = normal[row][pivot] / normal[pivot][pivot];
						for (int column = pivot; column < 4; column++) {
							normal[row][column] -= factor * normal[pivot][column];
						}
					}
				}
			}
			double b = normal[1][3] / normal[1][1];
			return Double.isFinite(b) ? Math.max(0, Math.min(32 * 1024, b)) : 0;
		}

		private static long allowed(Sample sample) {
			return sample.keptExpected() + Math.max(16, sample.keptExpected() / 100);
		}

		private static void grows(List<String> failed, String what, List<Sample> first, List<Sample> last,
				ToLongFunction<Sample> value, long slack) {
			long firstMax = first.stream().mapToLong(value).max().orElse(0);
			long lastMax = last.stream().mapToLong(value).max().orElse(0);
			check(failed, what + ": no growth (last window's highest at most the first's + " + slack + ")",
					lastMax <= firstMax + slack, lastMax + " against " + firstMax);
		}

		private static void p99(List<String> failed, Settings settings, String what, List<Sample> first, List<Sample> last,
				Function<Sample, Histogram> histogram) {
			double before = merged(first, histogram).getValueAtPercentile(99) / 1e6;
			double after = merged(last, histogram).getValueAtPercentile(99) / 1e6;
			String figures = String.format(Locale.ROOT, "%.1f ms against %.1f ms (%+.1f %%)", after, before,
					(after / before - 1) * 100);
			if (settings.p99Check()) {
				check(failed, what + " p99: last window within 10 % of the first", after <= before * 1.10, figures);
			}
			else {
				System.out.println("  [info] " + what + " p99, last window against the first: " + figures);
			}
		}

		private static Histogram merged(List<Sample> samples, Function<Sample, Histogram> histogram) {
			Histogram merged = new Histogram(TimeUnit.MINUTES.toNanos(10), 3);
			samples.forEach((sample) -> merged.add(histogram.apply(sample)));
			return merged;
		}

		private static double mean(List<Sample> samples, ToLongFunction<Sample> value) {
			return samples.stream().mapToLong(value).average().orElse(0);
		}

		private static void check(List<String> failed, String what, boolean passed, String figures) {
			System.out.printf(Locale.ROOT, "  [%s] %s: %s%n", passed ? "ok" : "FAILED", what, figures);
			if (!passed) {
				failed.add(what);
			}
		}

	}

	/** Counts the log's WARN and ERROR lines by logger and message pattern, and writes them to a file. */
	static final class LogCount extends AppenderBase<ILoggingEvent> {

		private final Map<String, LongAdder> kinds = new ConcurrentHashMap<>();

		private final LongAdder warns = new LongAdder();

		private final LongAdder errors = new LongAdder();

		private final PrintWriter file;

		private LogCount(Path path) throws IOException {
			Files.createDirectories(path.toAbsolutePath().getParent());
			this.file = new PrintWriter(Files.newBufferedWriter(path), true);
		}

		static LogCount install(Path path) {
			try {
				LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();
				LogCount appender = new LogCount(path);
				appender.setContext(context);
				appender.setName("soak");
				appender.start();
				Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
				root.detachAndStopAllAppenders();
				root.setLevel(Level.WARN);
				root.addAppender(appender);
				System.out.println("log:       WARN and ERROR lines to " + path.toAbsolutePath());
				return appender;
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		@Override
		protected void append(ILoggingEvent event) {
			boolean error = event.getLevel().isGreaterOrEqual(Level.ERROR);
			(error ? this.errors : this.warns).increment();
			String pattern = kind(event.getMessage());
			increment(this.kinds, event.getLevel() + " " + shortName(event.getLoggerName()) + ": " + pattern);
			this.file.println(Instant.ofEpochMilli(event.getTimeStamp()) + " " + event.getLevel() + " ["
					+ event.getThreadName() + "] " + event.getLoggerName() + " - " + event.getFormattedMessage()
					+ ((event.getThrowableProxy() != null) ? " | " + event.getThrowableProxy().getClassName() + ": "
							+ event.getThrowableProxy().getMessage() : ""));
		}

		/** A message without its numbers and quoted parts: the same kind of line counts as one kind. */
		static String kind(String message) {
			String kind = (message != null) ? message : "";
			kind = kind.replaceAll("'[^']*'", "'…'").replaceAll("\\d+(\\.\\d+)?", "N");
			return (kind.length() > 110) ? kind.substring(0, 110) + "…" : kind;
		}

		private static String shortName(String logger) {
			return logger.substring(logger.lastIndexOf('.') + 1);
		}

		long warns() {
			return this.warns.sum();
		}

		long errors() {
			return this.errors.sum();
		}

		Map<String, Long> kinds() {
			Map<String, Long> sorted = new LinkedHashMap<>();
			this.kinds.entrySet()
				.stream()
				.sorted((a, b) -> Long.compare(b.getValue().sum(), a.getValue().sum()))
				.forEach((entry) -> sorted.put(entry.getKey(), entry.getValue().sum()));
			return sorted;
		}

	}

}
