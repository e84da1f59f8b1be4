package dev.llmresilience.benchmarks;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.engine.BenchmarkAccess;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.LlmClient;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.Mono;

/**
 * Per-call cost of the gateway's decorator chain (route walk, retry, circuit breaker, bulkhead, the
 * attempt's watchdog, deadline) over an in-process stub transport that answers at once, against
 * calling the stub directly. Every call is subscribed with {@code block()} on both sides, so the
 * difference is the gateway's. The stub answers while the attempt subscribes, so the watchdog's one
 * timer is never set here: {@code stubWithTimeout} shows what setting one costs.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 6, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 3, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
public class GatewayOverheadBenchmark {

	private static final Completion COMPLETION = new Completion("Hello! How can I help?", "stub-model", "stop",
			List.of(), new Usage(9, 7));

	private static final Duration TIMEOUT = Duration.ofSeconds(60);

	private static final ChatRequest SUCCESS = request("success");

	private static final ChatRequest FALLBACK = request("fallback");

	private static final ChatRequest BREAKER_OPEN = request("breaker-open");

	private static final ChatRequest ALL_OPEN = request("all-open");

	/** The stub transport: a completion at once. */
	private final LlmClient stub = (request) -> Mono.just(COMPLETION);

	/**
	 * A primary that fails at once with a classified error the gateway falls back on but that is
	 * neither retried nor counted by the breaker (a content-filter block), so its breaker stays
	 * closed however long the benchmark runs. The exception is made per call, as a real client does.
	 */
	private final LlmClient filtering = (request) -> Mono.error(new LlmUpstreamException("filtering",
			Outcome.CONTENT_FILTERED, 200, null, "The provider's content filter blocked the answer", null));

	private Endpoints endpoints;

	private LlmEndpoint endpoint;

	private LlmEndpoint open;

	private LlmGateway gateway;

	@Setup
	public void setUp() {
		this.endpoints = new Endpoints();
		String url = "http://127.0.0.1:9/v1";
		this.endpoint = this.endpoints.endpoint(Endpoints.settings("ok", url), this.stub);
		LlmEndpoint filtering = this.endpoints.endpoint(Endpoints.settings("filtering", url), this.filtering);
		LlmEndpoint backup = this.endpoints.endpoint(Endpoints.settings("backup", url), this.stub);
		LlmEndpoint open = this.endpoints.endpoint(Endpoints.settings("open", url), this.stub);
		this.open = open;
		LlmEndpoint openBackup = this.endpoints.endpoint(Endpoints.settings("open-backup", url), this.stub);
		LlmEndpoint backup2 = this.endpoints.endpoint(Endpoints.settings("backup2", url), this.stub);
		open.circuitBreaker().transitionToForcedOpenState();
		openBackup.circuitBreaker().transitionToForcedOpenState();
		this.gateway = Endpoints.gateway(Map.of("success", List.of("ok"), "fallback", List.of("filtering", "backup"),
				"breaker-open", List.of("open", "backup2"), "all-open", List.of("open", "open-backup")),
				Endpoints.DEFAULT_DEADLINE, this.endpoint, filtering, backup, open, openBackup, backup2);
		check(this.gateway.chat(SUCCESS).block(), Tier.PRIMARY);
		check(this.gateway.chat(FALLBACK).block(), Tier.FALLBACK);
		check(this.gateway.chat(BREAKER_OPEN).block(), Tier.FALLBACK);
		check(this.gateway.chat(ALL_OPEN).block(), Tier.BUSY);
	}

	@TearDown
	public void tearDown() {
		this.endpoints.close();
	}

	/** Baseline: the stub alone. */
	@Benchmark
	public Completion stubDirect() {
		return this.stub.chat(SUCCESS).block();
	}

	/** Baseline for the fallback: the failing stub, then the answering one, by hand. */
	@Benchmark
	public Completion stubDirectFallback() {
		return this.filtering.chat(FALLBACK).onErrorResume((error) -> this.stub.chat(FALLBACK)).block();
	}

	/**
	 * Attribution: the stub behind one Reactor {@code timeout(60s)}, which schedules (and cancels) a
	 * task on {@code Schedulers.parallel()}: what an attempt's watchdog costs when its answer is not
	 * there at once (one per attempt, for every bound).
	 */
	@Benchmark
	public Completion stubWithTimeout() {
		return this.stub.chat(SUCCESS).timeout(TIMEOUT).block();
	}

	/** One endpoint's chain only: retry, breaker, bulkhead, watchdog; no route walk. */
	@Benchmark
	public Completion endpointSuccess() {
		return BenchmarkAccess.chat(this.endpoint, SUCCESS).block();
	}

	/**
	 * Attribution: one endpoint whose breaker is open refuses the call (no timer is started, since
	 * the breaker refuses before the attempt subscribes to its timeout).
	 */
	@Benchmark
	public Object endpointRejectedByOpenBreaker() {
		return BenchmarkAccess.chat(this.open, SUCCESS).onErrorResume((error) -> Mono.just(COMPLETION)).block();
	}

	/** The gateway, primary answers. */
	@Benchmark
	public ChatResponse gatewaySuccess() {
		return this.gateway.chat(SUCCESS).block();
	}

	/** The gateway, primary fails at once (classified, not retried), backup answers. */
	@Benchmark
	public ChatResponse gatewayFallback() {
		return this.gateway.chat(FALLBACK).block();
	}

	/** The gateway, primary's breaker open (rejected without a call), backup answers. */
	@Benchmark
	public ChatResponse gatewayBreakerOpen() {
		return this.gateway.chat(BREAKER_OPEN).block();
	}

	/** The gateway, every breaker open: BUSY. */
	@Benchmark
	public ChatResponse gatewayAllOpenBusy() {
		return this.gateway.chat(ALL_OPEN).block();
	}

	private static ChatRequest request(String route) {
		return ChatRequest.builder().user("Hello").route(route).build();
	}

	private static void check(ChatResponse response, Tier tier) {
		if (response == null || response.tier() != tier) {
			throw new IllegalStateException("Expected " + tier + " but got " + response);
		}
	}

}
