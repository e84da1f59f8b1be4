package dev.llmresilience.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmException;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.support.BreakerCalls;
import dev.llmresilience.support.FakeUpstream;
import dev.llmresilience.support.FakeUpstream.Gate;
import dev.llmresilience.support.RawHttpServer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import mockwebserver3.MockResponse;
import mockwebserver3.MockWebServer;
import mockwebserver3.SocketEffect;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static dev.llmresilience.support.Answers.completion;
import static dev.llmresilience.support.Answers.completionBody;
import static dev.llmresilience.support.Answers.error;
import static dev.llmresilience.support.Answers.json;
import static dev.llmresilience.support.Answers.recorded;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * The fault matrix: every way an upstream can fail, each against a real local server (MockWebServer
 * for faults that are still HTTP, a raw socket for those below it), through the whole gateway with
 * millisecond backoffs and a per-attempt {@code timeout} on the faulty upstream of 500 ms where time is
 * the fault (5 s elsewhere, and on the backup, so that a loaded machine cannot turn a fast fault into a
 * timeout). Each case asserts the same four
 * things: how each attempt was classified, how many requests the faulty upstream received, what
 * its circuit breaker counted, and that the call ended within its timeouts and deadline. Every
 * attempt's error must also be one of our classified {@link LlmException}s, with a message that says
 * what happened.
 * <p>
 * Deeper checks of single rows live beside the rules they test and are not repeated here:
 * {@code StatusRulesTests} (Retry-After in seconds, as a date and in milliseconds; the recorded 400
 * and 401 bodies; the configuration-problem WARN), {@code AnswerBodyRulesTests} (tool calls, content
 * filter), {@code TransportRulesTests} (a MockWebServer close before and during the body, which the
 * raw resets and closes here complement), {@code OpenAiChatClientTests} (redirects 301, 302 and 308,
 * and the body limit at 2KB) and {@code PermitRulesTests} (cancel, open breaker, full bulkhead).
 * Streaming faults (an SSE stream cut or stalled after its first chunk) join this matrix when
 * {@code LlmGateway.stream} is built.
 */
@Timeout(30)
class FaultMatrixTests {

	/** The per-attempt timeout of the cases about time: short, so that they run fast. */
	private static final Duration SHORT_TIMEOUT = Duration.ofMillis(500);

	/** The per-attempt timeout of every other case: never reached unless something hangs. */
	private static final Duration TIMEOUT = Duration.ofSeconds(5);

	/** Slack over the time the rules allow, for a loaded two-core CI machine. */
	private static final Duration SLACK = Duration.ofSeconds(3);

	private static final List<Outcome> THREE_TIMEOUTS = List.of(Outcome.TIMEOUT, Outcome.TIMEOUT, Outcome.TIMEOUT);

	private static final List<Outcome> THREE_CONNECTION_FAILURES = List.of(Outcome.CONNECTION_FAILED,
			Outcome.CONNECTION_FAILED, Outcome.CONNECTION_FAILED);

	private static final List<Outcome> THREE_MALFORMED = List.of(Outcome.MALFORMED_RESPONSE,
			Outcome.MALFORMED_RESPONSE, Outcome.MALFORMED_RESPONSE);

	private static final List<Outcome> THREE_SERVER_ERRORS = List.of(Outcome.SERVER_ERROR, Outcome.SERVER_ERROR,
			Outcome.SERVER_ERROR);

	private FakeUpstream upstreams;

	private final List<AutoCloseable> resources = new ArrayList<>();

	/**
	 * One call before the matrix, so that the first case's time does not include loading Netty and
	 * Reactor and warming the JIT.
	 */
	@BeforeAll
	static void warmUp() {
		try (FakeUpstream warm = FakeUpstream.start()) {
			warm.primary().enqueue(completion("warm"));
			warm.runner().run((context) -> assertThat(FakeUpstream.chat(context).content()).isEqualTo("warm"));
		}
	}

	@BeforeEach
	void start() {
		this.upstreams = FakeUpstream.start();
	}

	@AfterEach
	void stop() throws Exception {
		for (AutoCloseable resource : this.resources) {
			resource.close();
		}
		this.upstreams.close();
	}

	static Stream<Fault> faults() {
		String completion = completionBody("an answer long enough to be trickled byte by byte ".repeat(20));
		return Stream.of(
				// Time: the per-attempt timeout cuts each attempt, whatever the server does
				Fault.of("slow headers (no answer within the timeout)", (upstreams) -> held(upstreams)).timeout(SHORT_TIMEOUT)
					.fallsBackAfter(THREE_TIMEOUTS).requests(3).breaker(BreakerCalls.failures(3)).within(3 * 500)
					.message("Timed out"),
				Fault.of("body trickled slower than the timeout", (upstreams) -> mock(upstreams, 3,
						new MockResponse.Builder(json(200, completion)).throttleBody(16, 100, TimeUnit.MILLISECONDS)
							.build())).timeout(SHORT_TIMEOUT)
					.fallsBackAfter(THREE_TIMEOUTS).requests(3).breaker(BreakerCalls.failures(3)).within(3 * 500)
					.message("Timed out"),
				Fault.of("headers sent, then the body stalls", (upstreams) -> mock(upstreams, 3,
						new MockResponse.Builder(json(200, completion)).onResponseBody(SocketEffect.Stall.INSTANCE)
							.build())).timeout(SHORT_TIMEOUT)
					.fallsBackAfter(THREE_TIMEOUTS).requests(3).breaker(BreakerCalls.failures(3)).within(3 * 500)
					.message("Timed out"),
				// 2700 ms fit two attempts of 900 ms, not a third, which is refused as DEADLINE_EXCEEDED:
				// the backup is then tried with what is left (about 900 ms) and answers
				Fault.of("deadline shorter than the retries", (upstreams) -> held(upstreams))
					.timeout(Duration.ofMillis(900))
					.properties("llm.gateway.deadline=2700ms")
					.fallsBackAfter(List.of(Outcome.TIMEOUT, Outcome.TIMEOUT, Outcome.DEADLINE_EXCEEDED))
					.requests(2).breaker(BreakerCalls.failures(2)).within(2700)
					.message("Timed out"),
				// Transport: no response, or a broken one
				Fault.of("connection refused", (upstreams) -> refused())
					.fallsBackAfter(THREE_CONNECTION_FAILURES).requests(0).breaker(BreakerCalls.failures(3)).within(0)
					.message("Connection failed"),
				Fault.of("connection reset (RST) before the response", (upstreams) -> raw(RawHttpServer.Behaviour.reset()))
					.fallsBackAfter(THREE_CONNECTION_FAILURES).requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("Connection failed"),
				Fault.of("empty response (closed without a byte)",
						(upstreams) -> raw(RawHttpServer.Behaviour.closeWithoutAnswer()))
					.fallsBackAfter(THREE_CONNECTION_FAILURES).requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("Connection failed"),
				Fault.of("connection reset (RST) in the middle of the body",
						(upstreams) -> raw(RawHttpServer.Behaviour.writeThenReset(truncated(completion, 200))))
					.fallsBackAfter(THREE_CONNECTION_FAILURES).requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("Connection failed"),
				Fault.of("connection closed before Content-Length bytes",
						(upstreams) -> raw(RawHttpServer.Behaviour.writeThenClose(truncated(completion, 200))))
					.fallsBackAfter(THREE_CONNECTION_FAILURES).requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("Connection failed"),
				Fault.of("malformed chunk size, connection left open",
						(upstreams) -> raw(RawHttpServer.Behaviour.writeThenHold(malformedChunk())))
					.fallsBackAfter(THREE_CONNECTION_FAILURES).requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("Call failed"),
				Fault.of("random bytes, then close", (upstreams) -> raw(RawHttpServer.Behaviour.writeThenClose(noise())))
					.fallsBackAfter(THREE_CONNECTION_FAILURES).requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("Call failed"),
				// A 2xx that is no answer
				Fault.of("200 with a body that is not JSON",
						(upstreams) -> mock(upstreams, 3, json(200, "<html><body>upstream maintenance</body></html>")))
					.fallsBackAfter(THREE_MALFORMED).requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("not valid JSON"),
				Fault.of("200 with truncated JSON",
						(upstreams) -> mock(upstreams, 3, json(200, completion.substring(0, completion.length() / 2))))
					.fallsBackAfter(THREE_MALFORMED).requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("not valid JSON"),
				Fault.of("200 with JSON without choices",
						(upstreams) -> mock(upstreams, 3, json(200, "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion\"}")))
					.fallsBackAfter(THREE_MALFORMED).requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("no choices"),
				Fault.of("200 with whitespace-only content", (upstreams) -> mock(upstreams, 3, completion(" \n\t ")))
					.fallsBackAfter(List.of(Outcome.EMPTY_RESPONSE, Outcome.EMPTY_RESPONSE, Outcome.EMPTY_RESPONSE))
					.requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("neither content nor tool calls"),
				Fault.of("200 with 8MB over a 1KB max-response-size",
						(upstreams) -> mock(upstreams, 3, json(200, completionBody("x".repeat(8 << 20)))))
					.properties("llm.endpoints.primary.max-response-size=1KB")
					.fallsBackAfter(THREE_MALFORMED).requests(3).breaker(BreakerCalls.failures(3)).within(0)
					.message("larger than the endpoint's max-response-size"),
				// Redirects: not followed, so the key never reaches the Location's host
				Fault.of("307 redirect to another server", FaultMatrixTests::redirectElsewhere)
					.fallsBackAfter(List.of(Outcome.CONFIGURATION_ERROR)).requests(1).breaker(BreakerCalls.failures(1))
					.within(0).message("HTTP 307"),
				// Each status of docs/failure-rules.md
				status(408, THREE_SERVER_ERRORS, 3), status(409, THREE_SERVER_ERRORS, 3),
				status(500, THREE_SERVER_ERRORS, 3), status(502, THREE_SERVER_ERRORS, 3),
				status(503, THREE_SERVER_ERRORS, 3), status(529, THREE_SERVER_ERRORS, 3),
				Fault.of("429 with retry-after-ms 50 (waited for, then retried)", (upstreams) -> mock(upstreams, 3,
						new MockResponse.Builder(error(429, "rate_limit_exceeded")).setHeader("retry-after-ms", "50")
							.build()))
					.fallsBackAfter(List.of(Outcome.RATE_LIMITED, Outcome.RATE_LIMITED, Outcome.RATE_LIMITED))
					.requests(3).breaker(BreakerCalls.failures(3)).within(2 * 50)
					.message("HTTP 429"),
				Fault.of("429 with Retry-After 30 (over max-retry-after: not waited for)", (upstreams) -> mock(upstreams, 1,
						new MockResponse.Builder(error(429, "rate_limit_exceeded")).setHeader("Retry-After", "30").build()))
					.fallsBackAfter(List.of(Outcome.RATE_LIMITED)).requests(1).breaker(BreakerCalls.failures(1)).within(0)
					.message("HTTP 429"),
				Fault.of("400 invalid request", (upstreams) -> mock(upstreams, 1,
						recorded("openai/dotnet-record-400-invalid-function-parameters.json")))
					.surfaces(Outcome.INVALID_REQUEST).requests(1).breaker(BreakerCalls.NONE).within(0)
					.message("HTTP 400"),
				Fault.of("401 invalid api key", (upstreams) -> mock(upstreams, 1,
						recorded("openai/dotnet-record-401-invalid-api-key.json")))
					.fallsBackAfter(List.of(Outcome.CONFIGURATION_ERROR)).requests(1).breaker(BreakerCalls.failures(1))
					.within(0).message("HTTP 401"),
				Fault.of("403 forbidden", (upstreams) -> mock(upstreams, 1, error(403, "unsupported_country_region_territory")))
					.fallsBackAfter(List.of(Outcome.CONFIGURATION_ERROR)).requests(1).breaker(BreakerCalls.failures(1))
					.within(0).message("HTTP 403"),
				Fault.of("404 model not found", (upstreams) -> mock(upstreams, 1, error(404, "model_not_found")))
					.fallsBackAfter(List.of(Outcome.CONFIGURATION_ERROR)).requests(1).breaker(BreakerCalls.failures(1))
					.within(0).message("HTTP 404"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("faults")
	void faultIsClassifiedRetriedCountedAndEndsInTime(Fault fault) {
		Upstream upstream = fault.upstream().apply(this.upstreams);
		this.resources.add(upstream);
		this.upstreams.backup().enqueue(completion("from backup"));
		StoppedObservations observations = new StoppedObservations();
		this.upstreams.runner()
			.withBean(ObservationRegistry.class, () -> observations.registry())
			.withPropertyValues("llm.endpoints.primary.base-url=" + upstream.baseUrl(),
					"llm.endpoints.primary.timeout=" + fault.timeout().toMillis() + "ms",
					"llm.defaults.timeout=" + TIMEOUT.toMillis() + "ms", "llm.gateway.deadline=30s")
			.withPropertyValues(fault.properties())
			.run((context) -> {
				LlmGateway gateway = context.getBean(LlmGateway.class);
				long start = System.nanoTime();
				Result result = Result.of(gateway, ChatRequest.ofUser("hello"));
				Duration elapsed = Duration.ofNanos(System.nanoTime() - start);

				List<Observation.Context> attempts = primaryAttempts(observations);
				List<Outcome> made = fault.outcomes()
					.stream()
					.filter((outcome) -> outcome != Outcome.DEADLINE_EXCEEDED)
					.toList();
				assertThat(attempts).extracting((attempt) -> Outcome.valueOf(value(attempt, "llm.outcome")))
					.as("classification of each attempt made")
					.isEqualTo(made);
				if (result.response() != null) {
					assertThat(result.response().attempts()).filteredOn((attempt) -> attempt.endpoint().equals("primary"))
						.extracting(Attempt::outcome)
						.as("classification of each attempt in the answer")
						.isEqualTo(fault.outcomes());
				}
				switch (fault.expected()) {
					case FALL_BACK -> {
						assertThat(result.response()).isNotNull();
						assertThat(result.response().tier()).isEqualTo(Tier.FALLBACK);
						assertThat(result.response().content()).isEqualTo("from backup");
						assertThat(this.upstreams.backup().getRequestCount()).isOne();
					}
					case DEGRADE -> {
						assertThat(result.response()).isNotNull();
						assertThat(result.response().tier()).isEqualTo(Tier.BUSY);
						assertThat(this.upstreams.backup().getRequestCount()).isZero();
					}
					case SURFACE -> {
						assertThat(result.error()).isInstanceOf(LlmInvalidRequestException.class);
						assertThat(this.upstreams.backup().getRequestCount()).isZero();
					}
				}
				if (fault.timeout().compareTo(TIMEOUT) < 0) {
					// a request may reach the server after its attempt timed out, or (on a loaded
					// machine) never: the attempts above are what the rules decide, and one at least
					// must have reached it
					await().atMost(Duration.ofSeconds(5))
						.untilAsserted(() -> assertThat(upstream.requests()).as("requests the faulty upstream received")
							.isBetween(1, fault.requests()));
				}
				else {
					assertThat(upstream.requests()).as("requests the faulty upstream received").isEqualTo(fault.requests());
				}
				assertThat(BreakerCalls.of(context, "primary")).as("primary's breaker").isEqualTo(fault.breaker());
				assertThat(elapsed).as("time to the answer").isLessThanOrEqualTo(fault.bound());
				upstream.verify();

				assertThat(attempts).extracting(Observation.Context::getError)
					.as("every failed attempt's error")
					.allSatisfy((error) -> assertThat(error).isInstanceOf(LlmException.class)
						.hasMessageContaining(fault.message()));
			});
	}

	private static List<Observation.Context> primaryAttempts(StoppedObservations observations) {
		return observations.stopped
			.stream()
			.filter((context) -> context.getName().equals(GatewayObservations.ATTEMPT))
			.filter((context) -> "primary".equals(value(context, "llm.endpoint")))
			.toList();
	}

	private static @Nullable String value(Observation.Context context, String key) {
		var keyValue = context.getLowCardinalityKeyValue(key);
		return (keyValue != null) ? keyValue.getValue() : null;
	}

	private static Fault status(int status, List<Outcome> outcomes, int requests) {
		return Fault.of("HTTP " + status, (upstreams) -> mock(upstreams, requests, error(status, "server_error")))
			.fallsBackAfter(outcomes)
			.requests(requests)
			.breaker(BreakerCalls.failures(requests))
			.within(0)
			.message("HTTP " + status);
	}

	private static Upstream mock(FakeUpstream upstreams, int times, MockResponse response) {
		MockWebServer primary = upstreams.primary();
		for (int i = 0; i < times; i++) {
			primary.enqueue(response);
		}
		return Upstream.of(primary.url("/v1").toString(), primary::getRequestCount);
	}

	private static Upstream held(FakeUpstream upstreams) {
		Gate gate = new Gate(completion("too late"));
		upstreams.primary().setDispatcher(gate);
		return new Upstream(upstreams.primary().url("/v1").toString(), upstreams.primary()::getRequestCount, () -> {
		}, gate::open);
	}

	private static Upstream raw(RawHttpServer.Behaviour behaviour) {
		RawHttpServer server = RawHttpServer.start(behaviour);
		return new Upstream(server.baseUrl(), server::requests, () -> {
		}, server::close);
	}

	private static Upstream refused() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			int port = socket.getLocalPort();
			return Upstream.of("http://127.0.0.1:" + port + "/v1", () -> 0);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Upstream redirectElsewhere(FakeUpstream upstreams) {
		MockWebServer elsewhere = new MockWebServer();
		try {
			elsewhere.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		elsewhere.enqueue(completion("followed the redirect"));
		upstreams.primary()
			.enqueue(new MockResponse.Builder().code(307)
				.setHeader("Location", elsewhere.url("/v1/chat/completions").toString())
				.build());
		return new Upstream(upstreams.primary().url("/v1").toString(), upstreams.primary()::getRequestCount,
				() -> assertThat(elsewhere.getRequestCount()).as("requests at the redirect's target").isZero(),
				elsewhere::close);
	}

	/** A valid head announcing the whole body, then only the first {@code length} bytes of it. */
	private static byte[] truncated(String body, int length) {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		String head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + bytes.length + "\r\n\r\n";
		byte[] headBytes = head.getBytes(StandardCharsets.ISO_8859_1);
		byte[] response = new byte[headBytes.length + length];
		System.arraycopy(headBytes, 0, response, 0, headBytes.length);
		System.arraycopy(bytes, 0, response, headBytes.length, length);
		return response;
	}

	private static byte[] malformedChunk() {
		return ("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
				+ "zz\r\n{\"choices\":[]}\r\n").getBytes(StandardCharsets.ISO_8859_1);
	}

	private static byte[] noise() {
		byte[] bytes = new byte[4096];
		new Random(6).nextBytes(bytes);
		return bytes;
	}

	/** Every observation that stopped, in order: one per attempt made, with its error. */
	static final class StoppedObservations implements ObservationHandler<Observation.Context> {

		final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();

		ObservationRegistry registry() {
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig().observationHandler(this);
			return registry;
		}

		@Override
		public void onStop(Observation.Context context) {
			this.stopped.add(context);
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

	}

	/** How a gateway call ended: an answer, or an error. */
	private record Result(@Nullable ChatResponse response, @Nullable Throwable error) {

		static Result of(LlmGateway gateway, ChatRequest request) {
			ChatResponse[] response = new ChatResponse[1];
			Throwable error = catchThrowable(() -> response[0] = gateway.chat(request).block(Duration.ofSeconds(20)));
			return new Result(response[0], error);
		}

		List<Attempt> attempts() {
			return (this.response != null) ? this.response.attempts() : List.of();
		}

	}

	/** The faulty upstream of one case. */
	private record Upstream(String baseUrl, java.util.function.IntSupplier requestCounter, Runnable verifier,
			AutoCloseable closer) implements AutoCloseable {

		static Upstream of(String baseUrl, java.util.function.IntSupplier requests) {
			return new Upstream(baseUrl, requests, () -> {
			}, () -> {
			});
		}

		int requests() {
			return this.requestCounter.getAsInt();
		}

		void verify() {
			this.verifier.run();
		}

		@Override
		public void close() throws Exception {
			this.closer.close();
		}

	}

	enum Expected {

		/** The primary's attempts fail, then the backup answers. */
		FALL_BACK,

		/** The call degrades without trying the backup: BUSY. */
		DEGRADE,

		/** The caller gets a typed error; no fallback. */
		SURFACE

	}

	/** One row of the matrix, built fluently. */
	record Fault(String name, Function<FakeUpstream, Upstream> upstream, Duration timeout, String[] properties,
			Expected expected, List<Outcome> outcomes, int requests, BreakerCalls breaker, Duration bound,
			String message) {

		static Fault of(String name, Function<FakeUpstream, Upstream> upstream) {
			return new Fault(name, upstream, TIMEOUT, new String[0], Expected.FALL_BACK, List.of(), 0,
					BreakerCalls.NONE, Duration.ZERO, "");
		}

		Fault timeout(Duration timeout) {
			return new Fault(this.name, this.upstream, timeout, this.properties, this.expected, this.outcomes,
					this.requests, this.breaker, this.bound, this.message);
		}

		Fault properties(String... properties) {
			return new Fault(this.name, this.upstream, this.timeout, properties, this.expected, this.outcomes, this.requests,
					this.breaker, this.bound, this.message);
		}

		Fault fallsBackAfter(List<Outcome> outcomes) {
			return new Fault(this.name, this.upstream, this.timeout, this.properties, Expected.FALL_BACK, outcomes, this.requests,
					this.breaker, this.bound, this.message);
		}

		Fault degradesAfter(List<Outcome> outcomes) {
			return new Fault(this.name, this.upstream, this.timeout, this.properties, Expected.DEGRADE, outcomes, this.requests,
					this.breaker, this.bound, this.message);
		}

		Fault surfaces(Outcome outcome) {
			return new Fault(this.name, this.upstream, this.timeout, this.properties, Expected.SURFACE, List.of(outcome), this.requests,
					this.breaker, this.bound, this.message);
		}

		Fault requests(int requests) {
			return new Fault(this.name, this.upstream, this.timeout, this.properties, this.expected, this.outcomes, requests,
					this.breaker, this.bound, this.message);
		}

		Fault breaker(BreakerCalls breaker) {
			return new Fault(this.name, this.upstream, this.timeout, this.properties, this.expected, this.outcomes, this.requests,
					breaker, this.bound, this.message);
		}

		/**
		 * The longest the call may take: what the rules allow (timeouts and Retry-After waits) plus
		 * {@link #SLACK}.
		 */
		Fault within(long allowedMillis) {
			return new Fault(this.name, this.upstream, this.timeout, this.properties, this.expected, this.outcomes, this.requests,
					this.breaker, Duration.ofMillis(allowedMillis).plus(SLACK), this.message);
		}

		Fault message(String message) {
			return new Fault(this.name, this.upstream, this.timeout, this.properties, this.expected, this.outcomes, this.requests,
					this.breaker, this.bound, message);
		}

		@Override
		public String toString() {
			return this.name;
		}

	}

}
