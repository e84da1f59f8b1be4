package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGatewayListener.HedgeOutcome;
import dev.llmresilience.protocol.Completion;
import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One gateway call, chat or stream: what its route walk shares (the route's endpoints in order, one
 * deadline that caps every attempt, one observation) and the same attempt accounting (listeners,
 * cost charged once per successful attempt) for both shapes. The walk itself is a {@link ChatWalk}
 * or a {@link StreamWalk}. The deadline bounds a chat call whole and a stream until its first token;
 * the request's own deadline also bounds a whole stream.
 */
final class GatewayCall {

	private static final AtomicIntegerFieldUpdater<GatewayCall> STOPPED = AtomicIntegerFieldUpdater
		.newUpdater(GatewayCall.class, "stopped");

	private static final Log logger = LogFactory.getLog(GatewayCall.class);

	private final String route;

	private final List<LlmEndpoint> endpoints;

	private final ChatRequest original;

	private final GatewayContext gateway;

	private final Observation observation;

	private final long start = now();

	private final long deadlineNanos;

	private final long streamDeadlineNanos;

	private final List<Attempt> attempts = new CopyOnWriteArrayList<>();

	private volatile @Nullable BigDecimal cost;

	private final @Nullable HedgePolicy hedging;

	private volatile int stopped;

	private @Nullable StreamWalk stream;

	GatewayCall(String route, List<LlmEndpoint> endpoints, ChatRequest request, GatewayContext gateway,
			Observation observation) {
		this.route = route;
		this.endpoints = endpoints;
		this.original = request;
		this.gateway = gateway;
		this.observation = observation;
		Duration deadline = (request.deadline() != null) ? request.deadline() : gateway.settings().deadline();
		this.deadlineNanos = plus(this.start, deadline);
		this.streamDeadlineNanos = (request.deadline() != null) ? plus(this.start, request.deadline()) : Long.MAX_VALUE;
		this.hedging = gateway.hedging().route(route);
	}

	/**
	 * The call as chat: the route's first whole answer, else a degraded one.
	 * @param again how the deferred queue asks the route again later
	 * @return the answer
	 */
	Mono<ChatResponse> chat(Function<ChatRequest, Mono<ChatResponse>> again) {
		return ChatWalk.chat(this, again);
	}

	/**
	 * The route walk of a chat call.
	 * @return the first answer; empty when none answered, a guard or the limit on calls in flight
	 * stopped the walk, or the deadline left no room; an error only for a caller error
	 */
	Mono<ChatResponse> live() {
		return ChatWalk.live(this);
	}

	/**
	 * The call as a stream.
	 * @return the chunks; one BUSY chunk when no endpoint could start
	 */
	Flux<ChatChunk> stream() {
		StreamWalk stream = new StreamWalk(this);
		this.stream = stream;
		return stream.start().doOnSubscribe((subscription) -> start())
			.doOnError(this::failed)
			.doFinally((signal) -> stop());
	}

	CallContext context(int index, CallContext.Race race) {
		Leg leg = new Leg(index);
		return new CallContext(leg, this.observation, this.deadlineNanos, this.streamDeadlineNanos,
				this.gateway.degradation().guard(), leg, race);
	}

	// A hedge that was sent or refused: to the route's counts and the listeners.
	void hedged(HedgePolicy policy, HedgeOutcome outcome, LlmEndpoint first, LlmEndpoint second) {
		policy.count(outcome);
		this.gateway.listeners().onHedge(this.route, first.name(), second.name(), outcome);
	}

	// Each attempt as it ends: to the listeners, and a successful one's tokens to the budget.
	private void attempted(EndpointSettings endpoint, Attempt attempt, @Nullable Completion completion) {
		this.attempts.add(attempt);
		this.cost = null;
		if (completion != null && endpoint.routing().price() != null) {
			this.cost = endpoint.routing().price().costOf(completion.usage());
			if (this.cost != null) {
				this.gateway.degradation().budget().record(this.cost);
			}
		}
		this.gateway.listeners().onAttempt(this.route, endpoint, attempt, completion);
		StreamWalk stream = this.stream;
		if (stream != null && completion != null) {
			stream.completed(endpoint, completion);
		}
	}

	ChatResponse answer(LlmEndpoint endpoint, Tier tier, Completion completion) {
		return new ChatResponse(completion.content(), endpoint.name(),
				(completion.model() != null) ? completion.model() : endpoint.settings().upstream().model(), tier,
				completion.finishReason(), completion.toolCalls(), completion.usage(), this.cost, elapsed(),
				this.attempts, null, null);
	}

	// The observation stops once the answer is known, before it travels on: its key values (the
	// convention's, taken at stop) and its timer are there when the caller has the answer.
	void answered(ChatResponse response) {
		GatewayObservations.answered(this.observation, response);
		stop();
		this.gateway.listeners().onResponse(this.route, response);
	}

	/** Start the call's observation. */
	void start() {
		this.observation.start();
	}

	/** Stop the call's observation, once. */
	void stop() {
		if (STOPPED.compareAndSet(this, 0, 1)) {
			this.observation.stop();
		}
	}

	void failed(Throwable error) {
		this.observation.error(error);
		stop();
		this.gateway.listeners().onError(this.route, error);
	}

	// The gateway-wide limit refused the call: one attempt, refused, on the endpoint it would have tried first.
	void refused() {
		LlmEndpoint first = this.endpoints.get(0);
		attempted(first.settings(), new Attempt(first.name(), Outcome.GATEWAY_FULL, Duration.ZERO), null);
	}

	void skipped(LlmEndpoint endpoint, Throwable error, String next) {
		Outcome outcome = FailureClassifier.outcomeOf(error);
		if (outcome == Outcome.CONFIGURATION_ERROR) {
			this.gateway.warnings().warn(endpoint.name(), error);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Endpoint '" + endpoint.name() + "' failed with " + outcome + "; " + next + " of route '"
					+ this.route + "': " + error.getMessage());
		}
	}

	Duration elapsed() {
		return Duration.ofNanos(now() - this.start);
	}

	String route() {
		return this.route;
	}

	List<LlmEndpoint> endpoints() {
		return this.endpoints;
	}

	ChatRequest original() {
		return this.original;
	}

	GatewayContext gateway() {
		return this.gateway;
	}

	List<Attempt> attempts() {
		return this.attempts;
	}

	@Nullable HedgePolicy hedging() {
		return this.hedging;
	}

	@Nullable BigDecimal cost() {
		return this.cost;
	}

	/**
	 * What one endpoint's attempts tell the call: each attempt as it ends, and whether a later
	 * endpoint would take the call now.
	 */
	private final class Leg implements BiConsumer<Attempt, @Nullable Completion>, BooleanSupplier {

		private final int index;

		Leg(int index) {
			this.index = index;
		}

		@Override
		public void accept(Attempt attempt, @Nullable Completion completion) {
			attempted(GatewayCall.this.endpoints.get(this.index).settings(), attempt, completion);
		}

		@Override
		public boolean getAsBoolean() {
			List<LlmEndpoint> endpoints = GatewayCall.this.endpoints;
			for (int i = this.index + 1; i < endpoints.size(); i++) {
				if (endpoints.get(i).admitsCalls()) {
					return true;
				}
			}
			return false;
		}

	}

	private static long plus(long at, Duration duration) {
		long nanos = duration.toNanos();
		return (Long.MAX_VALUE - at < nanos) ? Long.MAX_VALUE : at + nanos;
	}

	private static long now() {
		return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
	}

}
