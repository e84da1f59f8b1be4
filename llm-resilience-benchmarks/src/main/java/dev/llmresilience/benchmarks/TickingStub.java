package dev.llmresilience.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.util.concurrent.GlobalEventExecutor;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;
import reactor.netty.resources.LoopResources;

/**
 * An OpenAI-compatible provider on loopback (Reactor Netty, its own event loops) whose streamed
 * answers tick: a role chunk at once, then one content chunk every {@code tokenMillis}, then the
 * finish reason, the usage and {@code [DONE]}, every event flushed on its own. How many content
 * chunks a request gets is in its prompt ({@code ticks=N}), so that a warm-up can ask for fewer.
 * Each content chunk's text is {@code t} followed by the stub's {@link System#nanoTime()} when it
 * is written, on the connection's own event loop (its ticks are scheduled there), so that a reader
 * on the same machine takes its receive time minus it as the chunk's delay ({@code nanoTime} is
 * {@code CLOCK_MONOTONIC} on Linux: one clock for every process). {@link #cut()} closes every open
 * connection at once: a primary that dies mid-stream.
 */
final class TickingStub implements AutoCloseable {

	private static final Pattern TICKS = Pattern.compile("ticks=(\\d+)");

	private static final String PREFIX = "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\","
			+ "\"created\":1764450000,\"model\":\"stub-model\",\"choices\":[";

	private static final String ROLE = PREFIX
			+ "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";

	private static final String CONTENT_START = PREFIX + "{\"index\":0,\"delta\":{\"content\":\"t";

	private static final String CONTENT_END = "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";

	private static final String FINISH = PREFIX
			+ "{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n";

	private static final String DONE = "data: [DONE]\n\n";

	private final Duration tick;

	private final LoopResources loops;

	private final DisposableServer server;

	private final ChannelGroup open = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);

	private final Map<EventLoop, Scheduler> schedulers = new ConcurrentHashMap<>();

	/**
	 * Start a stub.
	 * @param tick the time between content chunks
	 * @param loopThreads its event-loop threads
	 */
	TickingStub(Duration tick, int loopThreads) {
		this.tick = tick;
		this.loops = LoopResources.create("ticking-stub", 1, loopThreads, true);
		this.server = HttpServer.create()
			.host("127.0.0.1")
			.port(0)
			.runOn(this.loops)
			.doOnConnection((connection) -> this.open.add(connection.channel()))
			.handle(this::handle)
			.bindNow();
	}

	private Mono<Void> handle(HttpServerRequest request, HttpServerResponse response) {
		return request.receive().aggregate().asString(StandardCharsets.UTF_8).defaultIfEmpty("").flatMap((body) -> {
			Matcher ticks = TICKS.matcher(body);
			int count = ticks.find() ? Integer.parseInt(ticks.group(1)) : 10;
			boolean usage = body.contains("\"include_usage\":true");
			return response.header(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8")
				.header(HttpHeaderNames.CACHE_CONTROL, "no-cache")
				.send(events(scheduler(response), count, usage), (buffer) -> true)
				.then();
		});
	}

	/** The Reactor scheduler over the event loop of the response's connection (one per loop). */
	private Scheduler scheduler(HttpServerResponse response) {
		EventLoop[] loop = new EventLoop[1];
		response.withConnection((connection) -> loop[0] = connection.channel().eventLoop());
		return this.schedulers.computeIfAbsent(loop[0], (eventLoop) -> Schedulers.fromExecutorService(eventLoop));
	}

	private Flux<ByteBuf> events(Scheduler scheduler, int count, boolean usage) {
		String usageEvent = PREFIX + "],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":" + count
				+ ",\"total_tokens\":" + (count + 9) + "}}\n\n";
		Flux<String> tail = usage ? Flux.just(FINISH, usageEvent, DONE) : Flux.just(FINISH, DONE);
		Flux<String> contents = Flux.interval(this.tick, this.tick, scheduler)
			.take(count)
			.map((tick) -> CONTENT_START + System.nanoTime() + CONTENT_END);
		return Flux.concat(Flux.just(ROLE), contents, tail).map(TickingStub::buffer);
	}

	private static ByteBuf buffer(String event) {
		return Unpooled.wrappedBuffer(event.getBytes(StandardCharsets.UTF_8));
	}

	String baseUrl() {
		return "http://127.0.0.1:" + this.server.port() + "/v1";
	}

	int port() {
		return this.server.port();
	}

	/** Connections open now. */
	int openConnections() {
		return this.open.size();
	}

	/**
	 * Close every open connection at once.
	 * @return how many were open
	 */
	int cut() {
		int count = this.open.size();
		this.open.close().awaitUninterruptibly(10_000);
		return count;
	}

	@Override
	public void close() {
		this.server.disposeNow();
		this.loops.disposeLater().block(Duration.ofSeconds(5));
	}

}
