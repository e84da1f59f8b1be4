package dev.llmresilience.engine;

import java.util.List;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.gateway.LlmGateway;
import dev.llmresilience.gateway.LlmGatewayListener;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The gateway: walks a route's endpoints in the order its {@link RouteBalancer} gives each call,
 * each through its own retry, circuit breaker and bulkhead; when none answers it degrades to an
 * earlier answer to the same request (CACHED), to the deferred queue for a deferrable request
 * (DEFERRED), and last to the fast BUSY answer. Every
 * attempt is capped at what is left of the call's deadline; the call-volume guard and the daily
 * budget stop upstream calls altogether, and the limit on calls in flight refuses a call past it.
 * Each call, chat or stream, is recorded by one {@link GatewayCall} and walked by one
 * {@link RouteWalk}, which a {@link ChatWalk} or a {@link StreamWalk} follows.
 */
class DefaultLlmGateway implements LlmGateway {

	private final EndpointRegistry endpoints;

	private final GatewaySettings settings;

	private final Degradation degradation;

	private final Degrader degrader;

	private final GatewayCall.Shared shared;

	private final RouteWalk.Guards guards;

	private final ConfigurationWarnings warnings = new ConfigurationWarnings();

	private final Hedging hedging;

	private final ObservationRegistry observations;

	private final RouteBalancer balancer;

	// a caller's chat, whose deferred request the queue tries again later by a background try
	private final ChatWalk.Degrading calls;

	// a background try, which completes empty when no endpoint answered
	private final ChatWalk.Degrading tries;

	/**
	 * Create a gateway with no listener, no observations and no degradation but BUSY.
	 * @param endpoints the endpoints and routes
	 * @param settings the gateway's settings
	 */
	public DefaultLlmGateway(EndpointRegistry endpoints, GatewaySettings settings) {
		this(endpoints, settings, Degradation.none(), List.of(), ObservationRegistry.NOOP);
	}

	/**
	 * Create a gateway.
	 * @param endpoints the endpoints and routes
	 * @param settings the gateway's settings
	 * @param degradation the route selector, cache, deferred queue and guards
	 * @param listeners hear every attempt and answer
	 * @param observations records one observation per call and one per attempt
	 */
	public DefaultLlmGateway(EndpointRegistry endpoints, GatewaySettings settings, Degradation degradation,
			List<LlmGatewayListener> listeners, ObservationRegistry observations) {
		this(endpoints, settings, degradation, listeners, observations, RouteBalancer.priority(endpoints),
				Hedging.off());
	}

	/**
	 * Create a gateway whose routes are balanced and may hedge their requests.
	 * @param endpoints the endpoints and routes
	 * @param settings the gateway's settings
	 * @param degradation the route selector, cache, deferred queue and guards
	 * @param listeners hear every attempt, answer and hedge
	 * @param observations records one observation per call and one per attempt
	 * @param balancer orders each call's endpoints
	 * @param hedging which routes hedge, and how
	 */
	public DefaultLlmGateway(EndpointRegistry endpoints, GatewaySettings settings, Degradation degradation,
			List<LlmGatewayListener> listeners, ObservationRegistry observations, RouteBalancer balancer,
			Hedging hedging) {
		this.endpoints = endpoints;
		this.balancer = balancer;
		this.settings = settings;
		this.degradation = degradation;
		this.degrader = new Degrader(settings, degradation);
		this.calls = new ChatWalk.Degrading(this.degrader, this::background);
		this.tries = new ChatWalk.Degrading(this.degrader, null);
		this.shared = new GatewayCall.Shared(settings.deadline(), new Listeners(listeners), degradation.budget());
		this.guards = new RouteWalk.Guards(degradation.budget(), degradation.limit(), degradation.guard());
		this.hedging = hedging;
		this.observations = observations;
		if (degradation.deferred() != null) {
			degradation.deferred()
				.runWith((again) -> background(routeOf(again), again), (again) -> RequestChecks.check(again, settings));
		}
	}

	/**
	 * Which routes hedge, and what their hedges came to.
	 * @return the hedging
	 */
	public Hedging hedging() {
		return this.hedging;
	}

	@Override
	public Mono<ChatResponse> chat(ChatRequest request) {
		return Mono.defer(() -> {
			RequestChecks.check(request, this.settings);
			String route = routeOf(request);
			List<LlmEndpoint> endpoints = ordered(route);
			return (endpoints != null) ? chat(route, endpoints, request, this.calls)
					: Mono.error(unknownRoute(route));
		});
	}

	@Override
	public Flux<ChatChunk> stream(ChatRequest request) {
		return Flux.defer(() -> {
			RequestChecks.check(request, this.settings);
			String route = routeOf(request);
			List<LlmEndpoint> endpoints = ordered(route);
			if (endpoints == null) {
				return Flux.error(unknownRoute(route));
			}
			GatewayCall call = new GatewayCall(route, request, true, this.shared,
					GatewayObservations.call(this.observations, route));
			return new StreamWalk(walk(call, endpoints), call, this.degrader, this.settings.resumeOnFallback()).start();
		});
	}

	@Override
	public Mono<DeferredResult> deferred(String ticket) {
		DeferredQueue deferred = this.degradation.deferred();
		return (deferred != null) ? deferred.lookup(ticket) : Mono.empty();
	}

	// A deferred request's later try: the live route walk only, unobserved.
	private Mono<ChatResponse> background(String route, ChatRequest request) {
		return Mono.defer(() -> {
			List<LlmEndpoint> endpoints = ordered(route);
			return (endpoints != null) ? chat(route, endpoints, request, this.tries) : Mono.error(unknownRoute(route));
		});
	}

	// One chat call; a background try is not observed.
	private Mono<ChatResponse> chat(String route, List<LlmEndpoint> endpoints, ChatRequest request,
			ChatWalk.Degrading degrading) {
		Observation observation = (degrading.again() != null) ? GatewayObservations.call(this.observations, route)
				: Observation.NOOP;
		GatewayCall call = new GatewayCall(route, request, false, this.shared, observation);
		return ChatWalk.chat(walk(call, endpoints), call, degrading);
	}

	private RouteWalk walk(GatewayCall call, List<LlmEndpoint> endpoints) {
		return new RouteWalk(call, endpoints, this.guards, this.hedging.route(call.route()), this.warnings);
	}

	// the route's endpoints in the order this call tries them, or null for an unknown route
	private @Nullable List<LlmEndpoint> ordered(String route) {
		List<LlmEndpoint> endpoints = this.endpoints.route(route);
		return (endpoints != null) ? this.balancer.order(route, endpoints) : null;
	}

	private String routeOf(ChatRequest request) {
		return (request.route() != null) ? request.route() : this.degradation.routeSelector().select(request);
	}

	private LlmInvalidRequestException unknownRoute(String route) {
		String nearest = UnknownKeys.nearestName(route, this.endpoints.routeNames().keySet());
		return new LlmInvalidRequestException("Unknown route '" + route + "'"
				+ ((nearest != null) ? " (did you mean '" + nearest + "'?)" : "")
				+ ": configure it under llm.routes or use one of " + this.endpoints.routeNames().keySet(), null, 0,
				"unknown_route");
	}

}
