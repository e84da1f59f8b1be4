package dev.llmresilience.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

/**
 * An OpenAI-compatible provider on loopback (Reactor Netty). A plain request is answered with a
 * canned chat completion after a fixed delay; a {@code "stream": true} request with server-sent
 * events as OpenAI sends them (a role chunk, content chunks, the finish reason, the usage when
 * {@code stream_options.include_usage} asks for it, then {@code [DONE]}): the first content chunk
 * after half the delay, the rest at the delay, so that both take the same time and the first token
 * means what it means in production. While its {@link Outage} is on, it does what its
 * {@link FailureMode} says. The outage is decided by the clock when the request arrives, and every
 * arrival is recorded, a breaker's synthetic probe (one token asked for) told apart.
 */
final class StubProvider implements AutoCloseable {

	static final byte[] COMPLETION = """
			{"id":"chatcmpl-bench","object":"chat.completion","created":1764450000,"model":"stub-model",\
			"choices":[{"index":0,"message":{"role":"assistant","content":"Hello! How can I help you today?"},\
			"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":9,"total_tokens":18}}"""
		.getBytes(StandardCharsets.UTF_8);

	static final byte[] SERVER_ERROR = """
			{"error":{"message":"The server had an error while processing your request.","type":"server_error",\
			"code":null}}""".getBytes(StandardCharsets.UTF_8);

	private static final String CHUNK = "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
			+ "\"created\":1764450000,\"model\":\"stub-model\",\"choices\":[%s]%s}\n\n";

	private static final List<String> CONTENT = List.of("Hello!", " How can I", " help you", " today?");

	/** What the provider does while its outage is on. */
	enum FailureMode {

		/** Accepts the request and never answers: the client's timeout ends it. */
		HANG,

		/** Answers 500 at once, with OpenAI's error body. */
		HTTP_500,

		/** Sends its first token only after the slow delay (20 s in real time), then answers normally. */
		SLOW_FIRST_TOKEN

	}

	/**
	 * When the provider is down, on {@link System#nanoTime()}'s clock: {@code [start, end)}.
	 * @param start first instant down
	 * @param end first instant up again
	 */
	record Outage(long start, long end) {

		static final Outage NONE = new Outage(Long.MIN_VALUE, Long.MIN_VALUE);

		boolean isDown(long now) {
			return now >= this.start && now < this.end;
		}

	}

	/**
	 * One request as the provider saw it.
	 * @param at arrival, on {@link System#nanoTime()}'s clock
	 * @param down whether the outage was on
	 * @param probe whether it asked for one token (a breaker's synthetic probe)
	 */
	record Arrival(long at, boolean down, boolean probe) {
	}

	private final Duration delay;

	private final Duration slow;

	private volatile FailureMode mode;

	/** The share of normal requests answered 500 at random (0 unless {@link #errorRate(double)} says). */
	private volatile double errorRate;

	/** Each normal answer's time to its first token, drawn per request, or {@code null} for half of {@code delay}. */
	private final @Nullable LongSupplier firstTokens;

	private final boolean record;

	private final List<Arrival> arrivals = new ArrayList<>();

	private final LoopResources loops;

	private final DisposableServer server;

	private volatile Outage outage = Outage.NONE;

	private final AtomicLong connections = new AtomicLong();

	private final AtomicLong open = new AtomicLong();

	/**
	 * A provider whose slow mode sends its first token after {@code slow}.
	 * @param name names its event-loop threads
	 * @param delay normal time to the whole answer
	 * @param slow time to the first token in {@link FailureMode#SLOW_FIRST_TOKEN}
	 * @param mode what it does in its outage
	 * @param record whether to record arrivals
	 */
	StubProvider(String name, Duration delay, Duration slow, FailureMode mode, boolean record) {
		this(name, delay, slow, mode, null, record);
	}

	/**
	 * A provider whose normal answers take their first token from {@code firstTokens}, drawn per
	 * request, and the rest of the answer half of {@code delay} after it.
	 * @param name names its event-loop threads
	 * @param delay twice the time from the first token to the end
	 * @param slow time to the first token in {@link FailureMode#SLOW_FIRST_TOKEN}
	 * @param mode what it does in its outage
	 * @param firstTokens each answer's time to its first token (nanoseconds), or {@code null} for half of {@code delay}
	 * @param record whether to record arrivals
	 */
	StubProvider(String name, Duration delay, Duration slow, FailureMode mode, @Nullable LongSupplier firstTokens,
			boolean record) {
		this.delay = delay;
		this.slow = slow;
		this.mode = mode;
		this.firstTokens = firstTokens;
		this.record = record;
		this.loops = LoopResources.create("stub-" + name, 1, 2, true);
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.runOn(this.loops)
			.doOnChannelInit((observer, channel, address) -> {
				this.connections.incrementAndGet();
				this.open.incrementAndGet();
				channel.closeFuture().addListener((future) -> this.open.decrementAndGet());
			})
			.handle(this::handle)
			.bindNow();
	}

	StubProvider(String name, Duration delay, FailureMode mode, boolean record) {
		this(name, delay, Duration.ZERO, mode, record);
	}

	private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		long now = System.nanoTime();
		boolean down = this.outage.isDown(now);
		// Read the body as a string: discarding the ByteBufs with then() alone releases them twice (Netty 4.2)
		return request.receive().aggregate().asString(StandardCharsets.UTF_8).defaultIfEmpty("").flatMap((body) -> {
			// The wire format is the starter's own (Jackson, no spaces) or RawClient's
			boolean stream = body.contains("\"stream\":true");
			boolean probe = body.contains("\"max_tokens\":1,") || body.contains("\"max_tokens\":1}");
			if (this.record) {
				synchronized (this.arrivals) {
					this.arrivals.add(new Arrival(now, down, probe));
				}
			}
			FailureMode mode = this.mode;
			if (down && mode == FailureMode.HANG) {
				return Mono.never();
			}
			boolean error = !down && !probe && this.errorRate > 0 && ThreadLocalRandom.current().nextDouble() < this.errorRate;
			if (error || (down && mode == FailureMode.HTTP_500)) {
				return json(response.status(HttpResponseStatus.INTERNAL_SERVER_ERROR), Mono.just(SERVER_ERROR),
						SERVER_ERROR.length);
			}
			// slow: the first token comes after the slow delay instead of half the normal one
			Duration firstToken = down ? this.slow
					: (this.firstTokens != null) ? Duration.ofNanos(this.firstTokens.getAsLong()) : this.delay.dividedBy(2);
			Duration rest = this.delay.minus(this.delay.dividedBy(2));
			if (stream) {
				return events(response, firstToken, rest, probe, body.contains("\"include_usage\":true"));
			}
			return json(response, later(firstToken.plus(rest), COMPLETION), COMPLETION.length);
		});
	}

	private static Mono<Void> json(HttpServerResponse response, Mono<byte[]> body, int length) {
		return response.header(HttpHeaderNames.CONTENT_TYPE, "application/json")
			.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(length))
			.sendByteArray(body)
			.then();
	}

	/** A streamed answer: role and first content chunk after {@code firstToken}, the rest {@code rest} later. */
	private static Mono<Void> events(HttpServerResponse response, Duration firstToken, Duration rest, boolean probe,
			boolean usage) {
		List<String> first = List.of(chunk("{\"role\":\"assistant\",\"content\":\"\"}", null),
				chunk(content(CONTENT.get(0)), null));
		List<String> then = new ArrayList<>();
		if (!probe) {
			CONTENT.subList(1, CONTENT.size()).forEach((text) -> then.add(chunk(content(text), null)));
		}
		then.add(chunk("{}", probe ? "length" : "stop"));
		if (usage) {
			then.add(String.format(CHUNK, "", ",\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":"
					+ (probe ? 1 : 9) + ",\"total_tokens\":" + (probe ? 10 : 18) + "}"));
		}
		then.add("data: [DONE]\n\n");
		Flux<String> events = Flux.concat(laterAll(firstToken, first), laterAll(rest, then));
		return response.header(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8")
			.header(HttpHeaderNames.CACHE_CONTROL, "no-cache")
			// every event flushed on its own, as a provider sends tokens when they are made
			.send(events.map((event) -> Unpooled.wrappedBuffer(event.getBytes(StandardCharsets.UTF_8))), (buffer) -> true)
			.then();
	}

	private static String chunk(String delta, @Nullable String finishReason) {
		return String.format(CHUNK, "{\"index\":0,\"delta\":" + delta + ",\"logprobs\":null,\"finish_reason\":"
				+ ((finishReason != null) ? "\"" + finishReason + "\"" : "null") + "}", "");
	}

	private static String content(String text) {
		return "{\"content\":\"" + text + "\"}";
	}

	private static <T> Mono<T> later(Duration delay, T value) {
		return delay.isZero() ? Mono.just(value) : Mono.delay(delay).thenReturn(value);
	}

	private static Flux<String> laterAll(Duration delay, List<String> values) {
		return delay.isZero() ? Flux.fromIterable(values) : Mono.delay(delay).thenMany(Flux.fromIterable(values));
	}

	void outage(Outage outage) {
		this.outage = outage;
	}

	/** What the next outage does (set before it starts). */
	void mode(FailureMode mode) {
		this.mode = mode;
	}

	/**
	 * Answer this share of normal requests (not probes) with a 500 at random.
	 * @param errorRate from 0 to 1
	 */
	void errorRate(double errorRate) {
		this.errorRate = errorRate;
	}

	/** Connections open now. */
	long openConnections() {
		return this.open.get();
	}

	int port() {
		return this.server.port();
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.server.port() + "/v1";
	}

	/** How many connections clients have opened to it so far (a pooled client opens few). */
	long connections() {
		return this.connections.get();
	}

	List<Arrival> arrivals() {
		synchronized (this.arrivals) {
			return List.copyOf(this.arrivals);
		}
	}

	@Override
	public void close() {
		this.server.disposeNow();
		this.loops.disposeLater().block(Duration.ofSeconds(5));
	}

}
