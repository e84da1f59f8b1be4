package dev.llmresilience.gateway;

import java.math.BigDecimal;
import java.math.MathContext;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.endpoint.EndpointRegistry;
import dev.llmresilience.endpoint.EndpointSettings;
import dev.llmresilience.endpoint.LlmEndpoint;
import dev.llmresilience.failure.Attempt;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmUnavailableException;
import dev.llmresilience.failure.Outcome;
import dev.llmresilience.protocol.Completion;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The gateway: walks a route's endpoints in order, each through its own retry, circuit breaker and
 * bulkhead, and when none answers gives the fast BUSY answer. The whole call is bounded by the
 * deadline.
 */
public class DefaultLlmGateway implements LlmGateway {

	private static final Log logger = LogFactory.getLog(DefaultLlmGateway.class);

	private final EndpointRegistry endpoints;

	private final GatewaySettings settings;

	/**
	 * Create a gateway.
	 * @param endpoints the endpoints and routes
	 * @param settings the gateway's settings
	 */
	public DefaultLlmGateway(EndpointRegistry endpoints, GatewaySettings settings) {
		this.endpoints = endpoints;
		this.settings = settings;
	}

	@Override
	public Mono<ChatResponse> chat(ChatRequest request) {
		return Mono.defer(() -> {
			String routeName = (request.route() != null) ? request.route() : EndpointRegistry.DEFAULT_ROUTE;
			List<LlmEndpoint> route = this.endpoints.route(routeName);
			if (route == null) {
				return Mono.error(new LlmInvalidRequestException("Unknown route '" + routeName
						+ "': configure it under llm.routes or use one of " + this.endpoints.routeNames().keySet(),
						null, 0, "unknown_route"));
			}
			Call call = new Call(routeName, now());
			Duration deadline = (request.deadline() != null) ? request.deadline() : this.settings.deadline();
			return Flux.range(0, route.size())
				.concatMap((index) -> attempt(call, route.get(index), index, request), 0)
				.next()
				.timeout(deadline, Mono.defer(() -> {
					logger.debug("Gateway call on route '" + routeName + "' reached its deadline of " + deadline);
					return busy(call);
				}))
				.switchIfEmpty(Mono.defer(() -> busy(call)));
		});
	}

	private Mono<ChatResponse> attempt(Call call, LlmEndpoint endpoint, int index, ChatRequest request) {
		return endpoint.call(request, call.attempts::add)
			.map((completion) -> answer(call, endpoint, (index == 0) ? Tier.PRIMARY : Tier.FALLBACK, completion))
			.onErrorResume((error) -> FailureClassifier.outcomeOf(error).action() == Outcome.Action.FALL_BACK,
					(error) -> {
						if (logger.isDebugEnabled()) {
							logger.debug("Endpoint '" + endpoint.name() + "' failed with "
									+ FailureClassifier.outcomeOf(error) + "; trying the next endpoint of route '"
									+ call.route + "': " + error.getMessage());
						}
						return Mono.empty();
					});
	}

	private ChatResponse answer(Call call, LlmEndpoint endpoint, Tier tier, Completion completion) {
		EndpointSettings settings = endpoint.settings();
		return new ChatResponse(completion.content(), endpoint.name(),
				(completion.model() != null) ? completion.model() : settings.model(), tier, completion.finishReason(),
				completion.toolCalls(), completion.usage(), cost(settings, completion.usage()), call.elapsed(),
				call.attempts, null);
	}

	private Mono<ChatResponse> busy(Call call) {
		List<Attempt> attempts = List.copyOf(call.attempts);
		if (this.settings.busyAsError()) {
			return Mono.error(new LlmUnavailableException(call.route, attempts));
		}
		boolean filtered = !attempts.isEmpty()
				&& attempts.stream().anyMatch((attempt) -> attempt.outcome() == Outcome.CONTENT_FILTERED);
		String content = filtered ? this.settings.contentFilteredMessage() : this.settings.busyMessage();
		return Mono.just(new ChatResponse(content, null, null, Tier.BUSY, filtered ? "content_filter" : null,
				List.of(), null, null, call.elapsed(), attempts, null));
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
			String routeName = (request.route() != null) ? request.route() : EndpointRegistry.DEFAULT_ROUTE;
			List<LlmEndpoint> route = this.endpoints.route(routeName);
			if (route == null) {
				return Flux.error(new LlmInvalidRequestException("Unknown route '" + routeName
						+ "': configure it under llm.routes or use one of " + this.endpoints.routeNames().keySet(),
						null, 0, "unknown_route"));
			}
			return new StreamCall(routeName, route, request, this.settings).run();
		});
	}

	@Override
	public Mono<DeferredResult> deferred(String ticket) {
		return Mono.error(new UnsupportedOperationException(
				"Deferred requests are not available yet in this version of llm-resilience"));
	}

	private static long now() {
		return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
	}

	private static final class Call {

		private final String route;

		private final long start;

		private final List<Attempt> attempts = new CopyOnWriteArrayList<>();

		Call(String route, long start) {
			this.route = route;
			this.start = start;
		}

		Duration elapsed() {
			return Duration.ofNanos(now() - this.start);
		}

	}

}
