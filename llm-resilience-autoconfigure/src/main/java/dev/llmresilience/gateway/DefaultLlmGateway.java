package dev.llmresilience.gateway;

import java.math.BigDecimal;
import java.math.MathContext;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import dev.llmresilience.cache.CachedAnswer;
import dev.llmresilience.cache.FallbackCache;
import dev.llmresilience.cache.RequestKeys;
import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.DeferredResult;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.deferred.DeferredQueue;
import dev.llmresilience.endpoint.CallContext;
import dev.llmresilience.endpoint.EndpointRegistry;
import dev.llmresilience.endpoint.EndpointSettings;
import dev.llmresilience.endpoint.LlmEndpoint;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmUnavailableException;
import dev.llmresilience.protocol.Completion;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The gateway: walks a route's endpoints in order, each through its own retry, circuit breaker and
 * bulkhead; when none answers it degrades to an earlier answer to the same request (CACHED), to the
 * deferred queue for a deferrable request (DEFERRED), and last to the fast BUSY answer. The whole
 * call is bounded by its deadline; the call-volume guard and the daily budget stop upstream calls
 * altogether.
 */
public class DefaultLlmGateway implements LlmGateway {

	private static final Log logger = LogFactory.getLog(DefaultLlmGateway.class);

	private static final Duration CONFIGURATION_WARNING_INTERVAL = Duration.ofMinutes(1);

	private final EndpointRegistry endpoints;

	private final GatewaySettings settings;

	private final List<LlmGatewayListener> listeners;

	private final ObservationRegistry observations;

	private final Degradation degradation;

	private final Map<String, Long> configurationWarnings = new ConcurrentHashMap<>();

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
		this.endpoints = endpoints;
		this.settings = settings;
		this.degradation = degradation;
		this.listeners = List.copyOf(listeners);
		this.observations = observations;
	}

	@Override
	public Mono<ChatResponse> chat(ChatRequest request) {
		return Mono.defer(() -> {
			RequestChecks.check(request, this.settings);
			String routeName = routeOf(request);
			List<LlmEndpoint> route = this.endpoints.route(routeName);
			if (route == null) {
				return Mono.error(unknownRoute(routeName));
			}
			Observation observation = GatewayObservations.call(this.observations, routeName);
			Duration deadline = (request.deadline() != null) ? request.deadline() : this.settings.deadline();
			Call call = new Call(routeName, now(), deadline, observation);
			return live(call, route, request)
				.timeout(deadline, Mono.defer(() -> {
					logger.debug("Gateway call on route '" + routeName + "' reached its deadline of " + deadline);
					return Mono.empty();
				}))
				.switchIfEmpty(Mono.defer(() -> degrade(call, request)))
				.doOnSubscribe((subscription) -> observation.start())
				.doOnNext((response) -> {
					GatewayObservations.answered(observation, response);
					publish((listener) -> listener.onResponse(routeName, response));
				})
				.doOnError((error) -> {
					observation.error(error);
					publish((listener) -> listener.onError(routeName, error));
				})
				.doFinally((signal) -> observation.stop());
		});
	}

	private String routeOf(ChatRequest request) {
		return (request.route() != null) ? request.route() : this.degradation.routeSelector().select(request);
	}

	private LlmInvalidRequestException unknownRoute(String routeName) {
		return new LlmInvalidRequestException("Unknown route '" + routeName
				+ "': configure it under llm.routes or use one of " + this.endpoints.routeNames().keySet(), null, 0,
				"unknown_route");
	}

	/**
	 * The route walk: each endpoint in order until one answers; empty when none does, when a guard
	 * stops it, or when the deadline leaves no room; an error only for a caller error.
	 */
	private Mono<ChatResponse> live(Call call, List<LlmEndpoint> route, ChatRequest request) {
		if (this.degradation.budget().isTripped()) {
			return Mono.empty();
		}
		return Flux.range(0, route.size())
			.concatMap((index) -> attempt(call, route.get(index), index, request))
			.next()
			.doOnNext((response) -> remember(call, request, response))
			.onErrorResume((error) -> FailureClassifier.outcomeOf(error).action() == Outcome.Action.DEGRADE,
					(error) -> Mono.empty());
	}

	private void remember(Call call, ChatRequest request, ChatResponse response) {
		if (response.cost() != null) {
			this.degradation.budget().record(response.cost());
		}
		FallbackCache cache = this.degradation.cache();
		if (cache != null) {
			try {
				cache.put(RequestKeys.of(call.route, request), response);
			}
			catch (RuntimeException ex) {
				// the application's cache may be remote and down: the live answer stands
				logger.warn("Could not keep the answer in the fallback cache: " + ex);
			}
		}
	}

	/**
	 * Nothing live answered: an earlier answer to the same request, else a place in the deferred
	 * queue for a deferrable request, else BUSY.
	 */
	private Mono<ChatResponse> degrade(Call call, ChatRequest request) {
		Optional<CachedAnswer> cached = cached(call, request);
		if (cached.isPresent()) {
			return Mono.just(cachedAnswer(call, cached.get()));
		}
		DeferredQueue deferred = this.degradation.deferred();
		// a spent guard must not fill the queue, and a content filter would block the request again later
		if (deferred != null && request.deferrable() && !call.guardTripped() && !contentFiltered(call.attempts)) {
			Optional<String> ticket = deferred.enqueue(request, (again) -> backgroundAttempt(call.route, again));
			if (ticket.isPresent()) {
				return Mono.just(new ChatResponse(this.settings.deferredMessage(), null, null, Tier.DEFERRED, null,
						List.of(), null, null, call.elapsed(), call.attempts, ticket.get(), null));
			}
			logger.debug("The deferred queue is full (" + deferred.capacity() + "): answering BUSY");
		}
		return busy(call);
	}

	private Optional<CachedAnswer> cached(Call call, ChatRequest request) {
		FallbackCache cache = this.degradation.cache();
		if (cache == null) {
			return Optional.empty();
		}
		try {
			return cache.get(RequestKeys.of(call.route, request));
		}
		catch (RuntimeException ex) {
			// a cache that is down is a cache miss: deferral and BUSY still follow
			logger.warn("Could not read the fallback cache: " + ex);
			return Optional.empty();
		}
	}

	private Mono<ChatResponse> backgroundAttempt(String routeName, ChatRequest request) {
		List<LlmEndpoint> route = this.endpoints.route(routeName);
		if (route == null) {
			return Mono.error(unknownRoute(routeName));
		}
		Duration deadline = (request.deadline() != null) ? request.deadline() : this.settings.deadline();
		Call call = new Call(routeName, now(), deadline, Observation.NOOP);
		return live(call, route, request).timeout(deadline, Mono.empty());
	}

	private ChatResponse cachedAnswer(Call call, CachedAnswer cached) {
		ChatResponse original = cached.response();
		Duration age = Duration.between(cached.answeredAt(), this.degradation.clock().instant());
		return new ChatResponse(original.content(), original.endpoint(), original.model(), Tier.CACHED,
				original.finishReason(), original.toolCalls(), original.usage(), null, call.elapsed(), call.attempts,
				null, age.isNegative() ? Duration.ZERO : age);
	}

	private Mono<ChatResponse> attempt(Call call, LlmEndpoint endpoint, int index, ChatRequest request) {
		EndpointSettings settings = endpoint.settings();
		// heard as each attempt ends, before its answer passes the retry, which drops an answer whose
		// caller has just let go: listeners then still hear of an attempt the breaker recorded
		BiConsumer<Attempt, @Nullable Completion> onAttempt = (attempt, completion) -> {
			call.attempts.add(attempt);
			publish((listener) -> listener.onAttempt(call.route, settings, attempt, completion));
		};
		return endpoint.call(request, new CallContext(onAttempt, call.observation, call.deadlineNanos,
				this.degradation.guard(), call.started))
			.map((completion) -> answer(call, endpoint, (index == 0) ? Tier.PRIMARY : Tier.FALLBACK, completion))
			.onErrorResume((error) -> FailureClassifier.outcomeOf(error).action() == Outcome.Action.FALL_BACK,
					(error) -> {
						Outcome outcome = FailureClassifier.outcomeOf(error);
						if (outcome == Outcome.CONFIGURATION_ERROR) {
							warnConfigurationProblem(endpoint, error);
						}
						else if (logger.isDebugEnabled()) {
							logger.debug("Endpoint '" + endpoint.name() + "' failed with " + outcome
									+ "; trying the next endpoint of route '" + call.route + "': " + error.getMessage());
						}
						return Mono.empty();
					});
	}

	/**
	 * A 401, 403 or 404 means the endpoint is misconfigured, which an operator must fix: say so at
	 * WARN, but at most once a minute per endpoint, since every call would otherwise repeat it.
	 */
	private void warnConfigurationProblem(LlmEndpoint endpoint, Throwable error) {
		long now = now();
		Long last = this.configurationWarnings.get(endpoint.name());
		if (last == null || now - last >= CONFIGURATION_WARNING_INTERVAL.toNanos()) {
			this.configurationWarnings.put(endpoint.name(), now);
			logger.warn("Endpoint '" + endpoint.name() + "' looks misconfigured (check its api-key, model and base-url); falling back: "
					+ error.getMessage());
		}
	}

	private void publish(Consumer<LlmGatewayListener> event) {
		for (LlmGatewayListener listener : this.listeners) {
			try {
				event.accept(listener);
			}
			catch (RuntimeException ex) {
				logger.warn("LlmGatewayListener " + listener.getClass().getName() + " failed: " + ex);
			}
		}
	}

	private ChatResponse answer(Call call, LlmEndpoint endpoint, Tier tier, Completion completion) {
		EndpointSettings settings = endpoint.settings();
		return new ChatResponse(completion.content(), endpoint.name(),
				(completion.model() != null) ? completion.model() : settings.model(), tier, completion.finishReason(),
				completion.toolCalls(), completion.usage(), cost(settings, completion.usage()), call.elapsed(),
				call.attempts, null, null);
	}

	private Mono<ChatResponse> busy(Call call) {
		List<Attempt> attempts = List.copyOf(call.attempts);
		if (this.settings.busyAsError()) {
			return Mono.error(new LlmUnavailableException(call.route, attempts));
		}
		return Mono.just(busyAnswer(this.settings, attempts, call.elapsed()));
	}

	/**
	 * The BUSY answer of a call (plain or streamed) that no endpoint answered: the busy message, or
	 * the content-filter message when a filter blocked the request.
	 */
	static ChatResponse busyAnswer(GatewaySettings settings, List<Attempt> attempts, Duration latency) {
		boolean filtered = contentFiltered(attempts);
		return new ChatResponse(filtered ? settings.contentFilteredMessage() : settings.busyMessage(), null, null,
				Tier.BUSY, filtered ? "content_filter" : null, List.of(), null, null, latency, attempts, null, null);
	}

	static boolean contentFiltered(List<Attempt> attempts) {
		return attempts.stream().anyMatch((attempt) -> attempt.outcome() == Outcome.CONTENT_FILTERED);
	}

	static @Nullable BigDecimal cost(EndpointSettings settings, @Nullable Usage usage) {
		EndpointSettings.Price price = settings.price();
		if (price == null || usage == null) {
			return null;
		}
		BigDecimal input = BigDecimal.valueOf(price.inputPerMillion())
			.multiply(BigDecimal.valueOf((usage.promptTokens() != null) ? usage.promptTokens() : 0));
		BigDecimal output = BigDecimal.valueOf(price.outputPerMillion())
			.multiply(BigDecimal.valueOf((usage.completionTokens() != null) ? usage.completionTokens() : 0));
		return input.add(output).divide(BigDecimal.valueOf(1_000_000), MathContext.DECIMAL64).stripTrailingZeros();
	}

	@Override
	public Flux<ChatChunk> stream(ChatRequest request) {
		return Flux.defer(() -> {
			RequestChecks.check(request, this.settings);
			String routeName = routeOf(request);
			List<LlmEndpoint> route = this.endpoints.route(routeName);
			if (route == null) {
				return Flux.error(unknownRoute(routeName));
			}
			StreamCall.StreamListener listener = new StreamCall.StreamListener() {

				@Override
				public void onAttempt(String route, EndpointSettings endpoint, Attempt attempt,
						@Nullable Completion completion) {
					publish((each) -> each.onAttempt(route, endpoint, attempt, completion));
				}

				@Override
				public void onResponse(String route, ChatResponse response) {
					publish((each) -> each.onResponse(route, response));
				}

				@Override
				public void onError(String route, Throwable error) {
					publish((each) -> each.onError(route, error));
				}

			};
			return new StreamCall(routeName, route, request, this.settings, this.degradation, listener).run()
				.doOnError((error) -> listener.onError(routeName, error));
		});
	}

	@Override
	public Mono<DeferredResult> deferred(String ticket) {
		DeferredQueue deferred = this.degradation.deferred();
		return (deferred != null) ? Mono.defer(() -> Mono.justOrEmpty(deferred.result(ticket))) : Mono.empty();
	}

	private static long now() {
		return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
	}

	private static final class Call {

		private final String route;

		private final long start;

		private final long deadlineNanos;

		private final Observation observation;

		private final List<Attempt> attempts = new CopyOnWriteArrayList<>();

		private final AtomicInteger started = new AtomicInteger();

		Call(String route, long start, Duration deadline, Observation observation) {
			this.route = route;
			this.start = start;
			this.deadlineNanos = start + deadline.toNanos();
			this.observation = observation;
		}

		boolean guardTripped() {
			return this.attempts.stream().anyMatch((attempt) -> attempt.outcome() == Outcome.GUARD_TRIPPED);
		}

		Duration elapsed() {
			return Duration.ofNanos(now() - this.start);
		}

	}

}
