package dev.llmresilience.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

/**
 * A provider with a real rate limit on its key: at most {@code requests} requests and
 * {@code tokens} tokens (each request's estimate as OpenAI counts it for the limit: its prompt's
 * characters / 4 and its {@code max_tokens}) per fixed window, refused past it with a 429. When it
 * {@code announces}, every answer, 429s included, carries OpenAI's headers
 * ({@code x-ratelimit-limit-requests}, {@code x-ratelimit-remaining-requests},
 * {@code x-ratelimit-reset-requests} as a Go duration, and the same for tokens) and a 429 also
 * {@code retry-after-ms} (and {@code retry-after}, whole seconds); when it does not, a 429 carries
 * {@code retry-after} alone. A JSON chat completion after {@code delay}.
 */
final class LimitedProvider implements AutoCloseable {

	private final int requests;

	private final long tokens;

	private final long windowNanos;

	private final Duration delay;

	private final boolean announces;

	private final long start = System.nanoTime();

	private final LoopResources loops;

	private final DisposableServer server;

	private long window = -1;

	private int requestsUsed;

	private long tokensUsed;

	private final AtomicLong received = new AtomicLong();

	private final AtomicLong refused = new AtomicLong();

	LimitedProvider(String name, int requests, long tokens, Duration window, Duration delay, boolean announces) {
		this.requests = requests;
		this.tokens = tokens;
		this.windowNanos = window.toNanos();
		this.delay = delay;
		this.announces = announces;
		this.loops = LoopResources.create("limited-" + name, 1, 2, true);
		this.server = HttpServer.create().host("127.0.0.1").port(0).runOn(this.loops).handle(this::handle).bindNow();
	}

	private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		return request.receive().aggregate().asString(StandardCharsets.UTF_8).defaultIfEmpty("").flatMap((body) -> {
			this.received.incrementAndGet();
			long cost = cost(body);
			long now = System.nanoTime();
			boolean taken;
			int requestsLeft;
			long tokensLeft;
			long reset;
			synchronized (this) {
				long current = (now - this.start) / this.windowNanos;
				if (current != this.window) {
					this.window = current;
					this.requestsUsed = 0;
					this.tokensUsed = 0;
				}
				taken = this.requestsUsed < this.requests && this.tokensUsed + cost <= this.tokens;
				if (taken) {
					this.requestsUsed++;
					this.tokensUsed += cost;
				}
				requestsLeft = this.requests - this.requestsUsed;
				tokensLeft = this.tokens - this.tokensUsed;
				reset = this.start + (current + 1) * this.windowNanos - now;
			}
			if (this.announces) {
				String resetText = goDuration(reset);
				response.header("x-ratelimit-limit-requests", Integer.toString(this.requests))
					.header("x-ratelimit-remaining-requests", Integer.toString(requestsLeft))
					.header("x-ratelimit-reset-requests", resetText)
					.header("x-ratelimit-limit-tokens", Long.toString(this.tokens))
					.header("x-ratelimit-remaining-tokens", Long.toString(tokensLeft))
					.header("x-ratelimit-reset-tokens", resetText);
			}
			if (!taken) {
				this.refused.incrementAndGet();
				if (this.announces) {
					response.header("retry-after-ms", Long.toString(Math.max(1, reset / 1_000_000)));
				}
				response.header("retry-after", Long.toString(Math.max(1, (reset + 999_999_999) / 1_000_000_000)));
				return PeerServer.send(response.status(HttpResponseStatus.TOO_MANY_REQUESTS), Mono.just(LIMITED), LIMITED.length);
			}
			return PeerServer.send(response, Mono.delay(this.delay).thenReturn(PeerServer.COMPLETION), PeerServer.COMPLETION.length);
		});
	}

	private static final byte[] LIMITED = """
			{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,\
			"code":"rate_limit_exceeded"}}""".getBytes(StandardCharsets.UTF_8);

	// as OpenAI counts a request against the token limit: the prompt's characters / 4 and max_tokens
	private static long cost(String body) {
		int max = body.indexOf("\"max_tokens\":");
		long completion = 0;
		if (max >= 0) {
			int from = max + "\"max_tokens\":".length();
			int to = from;
			while (to < body.length() && Character.isDigit(body.charAt(to))) {
				to++;
			}
			completion = (to > from) ? Long.parseLong(body.substring(from, to)) : 0;
		}
		return body.length() / 4 + completion;
	}

	// OpenAI's reset: "1s", "6m0s", "20ms"
	private static String goDuration(long nanos) {
		long millis = Math.max(1, nanos / 1_000_000);
		return (millis < 1000) ? millis + "ms" : String.format(Locale.ROOT, "%.3fs", millis / 1000.0);
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.server.port() + "/v1";
	}

	/** Requests received, refused or not. */
	long received() {
		return this.received.get();
	}

	/** Requests answered 429. */
	long refused() {
		return this.refused.get();
	}

	/** The windows begun since it started, the current one included. */
	long windows() {
		return (System.nanoTime() - this.start) / this.windowNanos + 1;
	}

	@Override
	public void close() {
		this.server.disposeNow();
		this.loops.disposeLater().block(Duration.ofSeconds(5));
	}

}
