package dev.llmresilience.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.engine.BenchmarkAccess;
import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import dev.llmresilience.engine.RouteBalancer;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.LlmClient;
import dev.llmresilience.spi.BalanceSource;
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
 * What a route's balancing costs per call: the choice alone ({@link RouteBalancer#order}) and a
 * whole gateway call over an in-process stub, for a route of three endpoints of equal priority with
 * {@code balance: priority} (the route's order, today's behaviour), {@code weighted} and
 * {@code least-latency}. Each route has endpoints of its own, so that the latency listeners of the
 * least-latency route do not weigh on the others.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
public class BalancingBenchmark {

	private static final Completion COMPLETION = new Completion("Hello! How can I help?", "stub-model", "stop",
			List.of(), new Usage(9, 7));

	private static final ChatRequest PRIORITY = request("priority");

	private static final ChatRequest WEIGHTED = request("weighted");

	private static final ChatRequest LEAST_LATENCY = request("least-latency");

	private final LlmClient stub = (request) -> Mono.just(COMPLETION);

	private Endpoints endpoints;

	private EndpointRegistry registry;

	private RouteBalancer balancer;

	private LlmGateway gateway;

	private List<LlmEndpoint> priorityRoute;

	private List<LlmEndpoint> weightedRoute;

	private List<LlmEndpoint> leastLatencyRoute;

	@Setup
	public void setUp() {
		this.endpoints = new Endpoints();
		List<LlmEndpoint> all = new ArrayList<>();
		Map<String, List<String>> routes = new LinkedHashMap<>();
		for (String route : List.of("priority", "weighted", "least-latency")) {
			List<String> names = new ArrayList<>();
			for (int i = 1; i <= 3; i++) {
				String name = route + "-" + i;
				all.add(this.endpoints.endpoint(Endpoints.settings(name, "http://127.0.0.1:9/v1"), this.stub));
				names.add(name);
			}
			routes.put(route, names);
		}
		this.registry = new EndpointRegistry(all, routes, List.of());
		this.balancer = BenchmarkAccess.balancer(this.registry,
				Map.of("weighted", "weighted", "least-latency", "least-latency"),
				Map.of("weighted-1", 5.0, "weighted-2", 3.0, "weighted-3", 2.0), BalanceSource.system());
		this.gateway = BenchmarkAccess.gateway(this.registry, Endpoints.DEFAULT_DEADLINE, this.balancer, null);
		this.priorityRoute = this.registry.route("priority");
		this.weightedRoute = this.registry.route("weighted");
		this.leastLatencyRoute = this.registry.route("least-latency");
		for (ChatRequest request : List.of(PRIORITY, WEIGHTED, LEAST_LATENCY)) {
			ChatResponse response = this.gateway.chat(request).block();
			if (response == null || response.tier() != Tier.PRIMARY) {
				throw new IllegalStateException("Expected PRIMARY but got " + response);
			}
		}
	}

	@TearDown
	public void tearDown() {
		this.endpoints.close();
	}

	/** The choice of a priority route: its precomputed order. */
	@Benchmark
	public List<LlmEndpoint> choosePriority() {
		return this.balancer.order("priority", this.priorityRoute);
	}

	/** The choice of a weighted route: one random draw over the endpoints that admit calls. */
	@Benchmark
	public List<LlmEndpoint> chooseWeighted() {
		return this.balancer.order("weighted", this.weightedRoute);
	}

	/** The choice of a least-latency route: two random draws, two estimates, two bulkheads read. */
	@Benchmark
	public List<LlmEndpoint> chooseLeastLatency() {
		return this.balancer.order("least-latency", this.leastLatencyRoute);
	}

	/** A whole call on the priority route. */
	@Benchmark
	public ChatResponse gatewayPriority() {
		return this.gateway.chat(PRIORITY).block();
	}

	/** A whole call on the weighted route. */
	@Benchmark
	public ChatResponse gatewayWeighted() {
		return this.gateway.chat(WEIGHTED).block();
	}

	/** A whole call on the least-latency route (each attempt also feeds its endpoint's estimate). */
	@Benchmark
	public ChatResponse gatewayLeastLatency() {
		return this.gateway.chat(LEAST_LATENCY).block();
	}

	private static ChatRequest request(String route) {
		return ChatRequest.builder().user("Hello").route(route).build();
	}

}
