package dev.llmresilience.support;

import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.endpoint.EndpointFactory;
import dev.llmresilience.endpoint.EndpointSettings;
import dev.llmresilience.endpoint.LlmEndpoint;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.protocol.ApiKey;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import dev.llmresilience.protocol.LlmClient;
import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.retry.RetryRegistry;
import mockwebserver3.MockResponse;
import okio.BufferedSink;
import okio.Okio;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Shared pieces of the streaming tests: the recorded SSE fixtures, SSE bodies for MockWebServer that
 * end cleanly, get cut or stall after a given event, hand-built endpoints, and a fake client for
 * virtual-time tests.
 */
public final class StreamTestSupport {

	private static final JsonMapper json = JsonMapper.builder().build();

	/** The end of every well-formed stream. */
	public static final String DONE = "data: [DONE]\n\n";

	private StreamTestSupport() {
	}

	/**
	 * A fixture of {@code src/test/resources/fixtures/stream}.
	 * @param name the file name
	 * @return its text
	 */
	public static String fixture(String name) {
		try (InputStream in = StreamTestSupport.class.getResourceAsStream("/fixtures/stream/" + name)) {
			if (in == null) {
				throw new IllegalArgumentException("No fixture " + name);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * A 200 {@code text/event-stream} response with a body sent whole.
	 * @param body the SSE text
	 * @return the response
	 */
	public static MockResponse sse(String body) {
		return new MockResponse.Builder().code(200).setHeader("Content-Type", "text/event-stream").body(body).build();
	}

	/**
	 * A 200 {@code text/event-stream} response, chunked, that sends {@code events} one by one and then
	 * ends as {@code ending} says.
	 * @param ending how the body ends
	 * @param stall released to end a {@link Ending#STALL} (the body is then cut)
	 * @param events the events, each a full SSE event
	 * @return the response
	 */
	public static MockResponse sse(Ending ending, CountDownLatch stall, String... events) {
		// The handler gets the raw socket after the headers, so the test decides exactly where the
		// body stops: after the last chunk, or in the middle with the connection closed.
		return new MockResponse.Builder().code(200)
			.setHeader("Content-Type", "text/event-stream")
			.removeHeader("Content-Length")
			.setHeader("Transfer-Encoding", "chunked")
			.socketHandler((socket) -> {
				try (BufferedSink sink = Okio.buffer(socket.getSink())) {
					for (String event : events) {
						byte[] bytes = event.getBytes(StandardCharsets.UTF_8);
						sink.writeUtf8(Integer.toHexString(bytes.length)).writeUtf8("\r\n").write(bytes).writeUtf8("\r\n");
						sink.flush();
					}
					if (ending == Ending.STALL) {
						stall.await(20, TimeUnit.SECONDS);
					}
					if (ending == Ending.CLEAN) {
						sink.writeUtf8("0\r\n\r\n").flush();
					}
				}
				catch (IOException ex) {
					// the client went away first
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				finally {
					socket.cancel();
				}
			})
			.build();
	}

	/** How a chunked test body ends. */
	public enum Ending {

		/** The last chunk is sent: the body ends normally. */
		CLEAN,

		/** The connection closes before the body's last chunk. */
		CUT,

		/** Nothing more is sent until the test releases it. */
		STALL

	}

	/**
	 * An SSE event with one content delta.
	 * @param content the text
	 * @return the event
	 */
	public static String content(String content) {
		return event(Map.of("choices", List.of(Map.of("index", 0, "delta", Map.of("content", content)))));
	}

	/**
	 * The SSE event with the role, and empty content, that opens OpenAI's streams.
	 * @return the event
	 */
	public static String role() {
		return event(Map.of("choices",
				List.of(Map.of("index", 0, "delta", Map.of("role", "assistant", "content", "")))));
	}

	/**
	 * An SSE event with a finish reason.
	 * @param reason the reason
	 * @return the event
	 */
	public static String finish(String reason) {
		return event(Map.of("choices", List.of(Map.of("index", 0, "delta", Map.of(), "finish_reason", reason))));
	}

	/**
	 * The final usage event.
	 * @param prompt prompt tokens
	 * @param completion completion tokens
	 * @return the event
	 */
	public static String usage(int prompt, int completion) {
		return event(Map.of("choices", List.of(), "usage", Map.of("prompt_tokens", prompt, "completion_tokens",
				completion, "total_tokens", prompt + completion)));
	}

	/**
	 * A whole, well-formed stream of the given text deltas.
	 * @param contents the deltas
	 * @return the SSE text
	 */
	public static String stream(String... contents) {
		StringBuilder body = new StringBuilder(role());
		for (String content : contents) {
			body.append(content(content));
		}
		return body.append(finish("stop")).append(usage(5, contents.length)).append(DONE).toString();
	}

	private static String event(Map<String, Object> data) {
		Map<String, Object> chunk = new LinkedHashMap<>();
		chunk.put("id", "chatcmpl-test");
		chunk.put("object", "chat.completion.chunk");
		chunk.putAll(data);
		return "data: " + json.writeValueAsString(chunk) + "\n\n";
	}

	/**
	 * Settings of a test endpoint: retries 1 ms apart without jitter, the built-in breaker defaults.
	 * @param name the name
	 * @param baseUrl the base URL
	 * @param firstTokenTimeout the first-token timeout
	 * @param streamIdleTimeout the idle timeout
	 * @param maxAttempts attempts in all
	 * @param maxConcurrentCalls the bulkhead's size
	 * @return the settings
	 */
	public static EndpointSettings settings(String name, String baseUrl, Duration firstTokenTimeout,
			Duration streamIdleTimeout, int maxAttempts, int maxConcurrentCalls) {
		return new EndpointSettings(name, URI.create(baseUrl), ApiKey.of("sk-test-123456789"), "m-" + name, "openai", 0,
				null, true, Map.of(), null, Duration.ofSeconds(60), Duration.ofSeconds(5), firstTokenTimeout,
				streamIdleTimeout, 10 * 1024 * 1024,
				new EndpointSettings.CircuitBreakerSettings(20, 20, 50, Duration.ofSeconds(30), 3,
						Duration.ofSeconds(60), 100),
				new EndpointSettings.RetrySettings(maxAttempts, Duration.ofMillis(1), 2.0, Duration.ofSeconds(8), 0,
						Duration.ofSeconds(10)),
				new EndpointSettings.BulkheadSettings(maxConcurrentCalls, Duration.ZERO));
	}

	/**
	 * An endpoint with its own breaker, retry and bulkhead.
	 * @param settings its settings
	 * @param client its client
	 * @return the endpoint
	 */
	public static LlmEndpoint endpoint(EndpointSettings settings, LlmClient client) {
		return new EndpointFactory(CircuitBreakerRegistry.ofDefaults(), RetryRegistry.ofDefaults(),
				BulkheadRegistry.ofDefaults(), new FailureClassifier(Clock.systemUTC()), Clock.systemUTC(), () -> 0.5)
			.create(settings, client);
	}

	/**
	 * A delta with text.
	 * @param text the text
	 * @return the delta
	 */
	public static CompletionDelta text(String text) {
		return new CompletionDelta(text, List.of(), null, null, null);
	}

	/**
	 * A delta with a finish reason.
	 * @param reason the reason
	 * @return the delta
	 */
	public static CompletionDelta finished(String reason) {
		return new CompletionDelta("", List.of(), reason, null, null);
	}

	/**
	 * A delta with token counts.
	 * @param prompt prompt tokens
	 * @param completion completion tokens
	 * @return the delta
	 */
	public static CompletionDelta counted(int prompt, int completion) {
		return new CompletionDelta("", List.of(), null, new Usage(prompt, completion), null);
	}

	/**
	 * An in-process client whose every streamed attempt is a new subscription to {@code stream}.
	 */
	public static final class FakeClient implements LlmClient {

		private final Supplier<Flux<CompletionDelta>> stream;

		private final AtomicInteger calls = new AtomicInteger();

		private final List<ChatRequest> requests = new java.util.concurrent.CopyOnWriteArrayList<>();

		/**
		 * Create a client.
		 * @param stream the stream of each attempt
		 */
		public FakeClient(Supplier<Flux<CompletionDelta>> stream) {
			this.stream = stream;
		}

		@Override
		public Mono<Completion> chat(ChatRequest request) {
			return Mono.error(new UnsupportedOperationException("stream only"));
		}

		@Override
		public Flux<CompletionDelta> stream(ChatRequest request) {
			return Flux.defer(() -> {
				this.calls.incrementAndGet();
				this.requests.add(request);
				return this.stream.get();
			});
		}

		/**
		 * How many attempts were made.
		 * @return the count
		 */
		public int calls() {
			return this.calls.get();
		}

		/**
		 * The requests of every attempt.
		 * @return the requests
		 */
		public List<ChatRequest> requests() {
			return this.requests;
		}

	}

}
