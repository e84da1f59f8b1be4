package dev.llmresilience.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

/**
 * An OpenAI-compatible provider on loopback (Reactor Netty) that answers every request with a
 * canned chat completion after a fixed delay, except while its {@link Outage} is on: then it
 * either hangs (holds the request until the client gives up) or answers 500 at once. The outage is
 * decided by the clock when the request arrives, and every arrival is recorded.
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

	/** What the provider does while its outage is on. */
	enum FailureMode {

		/** Never answers: the client's timeout ends the request. */
		HANG,

		/** Answers 500 at once. */
		HTTP_500

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
	 */
	record Arrival(long at, boolean down) {
	}

	private final Duration delay;

	private final FailureMode mode;

	private final boolean record;

	private final List<Arrival> arrivals = new ArrayList<>();

	private final LoopResources loops;

	private final DisposableServer server;

	private volatile Outage outage = Outage.NONE;

	StubProvider(String name, Duration delay, FailureMode mode, boolean record) {
		this.delay = delay;
		this.mode = mode;
		this.record = record;
		this.loops = LoopResources.create("stub-" + name, 1, 2, true);
		this.server = HttpServer.create().host("127.0.0.1").port(0).runOn(this.loops).handle(this::handle).bindNow();
	}

	private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		long now = System.nanoTime();
		boolean down = this.outage.isDown(now);
		if (this.record) {
			synchronized (this.arrivals) {
				this.arrivals.add(new Arrival(now, down));
			}
		}
		// Read the body as bytes: discarding the ByteBufs with then() alone releases them twice (Netty 4.2)
		if (down && this.mode == FailureMode.HANG) {
			return request.receive().asByteArray().then(Mono.never());
		}
		if (down) {
			return send(response.status(HttpResponseStatus.INTERNAL_SERVER_ERROR), request.receive().asByteArray().then(Mono.just(SERVER_ERROR)), SERVER_ERROR.length);
		}
		Mono<byte[]> body = this.delay.isZero() ? request.receive().asByteArray().then(Mono.just(COMPLETION))
				: request.receive().asByteArray().then(Mono.delay(this.delay)).thenReturn(COMPLETION);
		return send(response, body, COMPLETION.length);
	}

	private static Mono<Void> send(HttpServerResponse response, Mono<byte[]> body, int length) {
		return response.header(HttpHeaderNames.CONTENT_TYPE, "application/json")
			.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(length))
			.sendByteArray(body)
			.then();
	}

	void outage(Outage outage) {
		this.outage = outage;
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.server.port() + "/v1";
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
