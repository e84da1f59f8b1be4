package dev.llmresilience.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.ToLongFunction;

import io.netty.handler.codec.http.HttpHeaderNames;
import org.jspecify.annotations.Nullable;
import io.netty.handler.codec.http.HttpResponseStatus;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

/**
 * The one OpenAI-compatible server every peer of {@link PeerComparison} calls: a canned
 * {@code chat.completion} (every field the official SDKs read, so that Spring AI's and
 * LangChain4j's parsers accept it as they would OpenAI's), after a delay drawn per request (none, a
 * fixed one, or a straggler's), except while an outage is on: then it hangs or answers 500. It
 * counts what it was sent and what it answered whole, so that the extra upstream calls and tokens
 * of a hedge can be read off it.
 */
final class PeerServer implements AutoCloseable {

	/** Prompt and completion tokens of the canned answer. */
	static final int PROMPT_TOKENS = 9;

	static final int COMPLETION_TOKENS = 9;

	static final byte[] COMPLETION = ("""
			{"id":"chatcmpl-bench","object":"chat.completion","created":1764450000,"model":"stub-model",\
			"choices":[{"index":0,"message":{"role":"assistant","content":"Hello! How can I help you today?",\
			"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],\
			"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d},"service_tier":"default",\
			"system_fingerprint":"fp_bench"}""").formatted(PROMPT_TOKENS, COMPLETION_TOKENS,
			PROMPT_TOKENS + COMPLETION_TOKENS)
		.getBytes(StandardCharsets.UTF_8);

	static final byte[] SERVER_ERROR = """
			{"error":{"message":"The server had an error while processing your request.","type":"server_error",\
			"param":null,"code":null}}""".getBytes(StandardCharsets.UTF_8);

	private final LongSupplier delayNanos;

	private final @Nullable ToLongFunction<byte[]> delayForBody;

	private final StubProvider.FailureMode mode;

	private final LoopResources loops;

	private final DisposableServer server;

	private final AtomicLong received = new AtomicLong();

	private final AtomicLong receivedInOutage = new AtomicLong();

	private final AtomicLong answered = new AtomicLong();

	private volatile StubProvider.Outage outage = StubProvider.Outage.NONE;

	/**
	 * Start a server.
	 * @param name names its event loops
	 * @param delayNanos the delay before each answer, drawn per request
	 * @param mode what it does while its outage is on
	 */
	PeerServer(String name, LongSupplier delayNanos, StubProvider.FailureMode mode) {
		this(name, delayNanos, null, mode);
	}

	/**
	 * Start a server whose delay depends on what it is sent.
	 * @param name names its event loops
	 * @param delayForBody the delay before each answer, drawn per request from its body
	 * @param mode what it does while its outage is on
	 */
	PeerServer(String name, ToLongFunction<byte[]> delayForBody, StubProvider.FailureMode mode) {
		this(name, () -> 0, delayForBody, mode);
	}

	private PeerServer(String name, LongSupplier delayNanos, @Nullable ToLongFunction<byte[]> delayForBody,
			StubProvider.FailureMode mode) {
		this.delayNanos = delayNanos;
		this.delayForBody = delayForBody;
		this.mode = mode;
		this.loops = LoopResources.create("peer-" + name, 1, 2, true);
		this.server = HttpServer.create().host("127.0.0.1").port(0).runOn(this.loops).handle(this::handle).bindNow();
	}

	private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		boolean down = this.outage.isDown(System.nanoTime());
		this.received.incrementAndGet();
		Mono<byte[]> body = request.receive().aggregate().asByteArray().defaultIfEmpty(new byte[0]);
		if (down) {
			this.receivedInOutage.incrementAndGet();
			if (this.mode == StubProvider.FailureMode.HANG) {
				return body.then(Mono.never());
			}
			return send(response.status(HttpResponseStatus.INTERNAL_SERVER_ERROR), body.thenReturn(SERVER_ERROR),
					SERVER_ERROR.length);
		}
		ToLongFunction<byte[]> delayForBody = this.delayForBody;
		if (delayForBody != null) {
			Mono<byte[]> answer = body.flatMap((bytes) -> Mono.delay(Duration.ofNanos(delayForBody.applyAsLong(bytes))))
				.thenReturn(COMPLETION);
			return send(response, answer.doOnNext((bytes) -> this.answered.incrementAndGet()), COMPLETION.length);
		}
		long delay = this.delayNanos.getAsLong();
		Mono<byte[]> answer = (delay <= 0) ? body.thenReturn(COMPLETION)
				: body.then(Mono.delay(Duration.ofNanos(delay))).thenReturn(COMPLETION);
		return send(response, answer.doOnNext((bytes) -> this.answered.incrementAndGet()), COMPLETION.length);
	}

	/** A JSON body of a known length. */
	static Mono<Void> send(HttpServerResponse response, Mono<byte[]> body, int length) {
		return response.header(HttpHeaderNames.CONTENT_TYPE, "application/json")
			.header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(length))
			.sendByteArray(body)
			.then();
	}

	void outage(StubProvider.Outage outage) {
		this.outage = outage;
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.server.port() + "/v1";
	}

	/** Requests received, answered or not. */
	long received() {
		return this.received.get();
	}

	/** Requests received while the outage was on. */
	long receivedInOutage() {
		return this.receivedInOutage.get();
	}

	/** Answers sent whole (a request whose caller let go before its delay ended is not). */
	long answered() {
		return this.answered.get();
	}

	void reset() {
		this.received.set(0);
		this.receivedInOutage.set(0);
		this.answered.set(0);
	}

	@Override
	public void close() {
		this.server.disposeNow();
		this.loops.disposeLater().block(Duration.ofSeconds(5));
	}

}
