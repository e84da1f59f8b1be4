package dev.llmresilience.gateway;

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
import dev.llmresilience.endpoint.CallContext;
import dev.llmresilience.endpoint.EndpointSettings;
import dev.llmresilience.endpoint.LlmEndpoint;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One gateway call, chat or stream: one route walk over the route's endpoints in order (each
 * retrying on its own first), one deadline that caps every attempt, one observation, and the same
 * attempt accounting (listeners, cost charged once per successful attempt) for both shapes.
 * <p>
 * A chat call answers with the first endpoint that answers whole, else degrades (cached answer,
 * deferral, BUSY). A stream relays the chunks of the first endpoint that streams its first token;
 * when the stream breaks after that it is never restarted from the beginning: the subscriber gets
 * an {@link LlmStreamInterruptedException} with the text so far, or, with {@code resumeOnFallback},
 * the route's next endpoints are asked to continue the partial answer (sent as an assistant
 * message) and only the continuation is relayed, as {@link Tier#FALLBACK}. The deadline bounds a
 * chat call whole and a stream until its first token; the request's own deadline also bounds a
 * whole stream. The chat walk is a {@link ChatWalk}; on a route that hedges, each endpoint with a
 * next one is raced against it by a {@link Hedge}, chat and stream alike.
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

	private ChatRequest request;

	private boolean streaming;

	private final @Nullable HedgePolicy hedging;

	private volatile int stopped;

	private final StringBuilder text = new StringBuilder(0);

	private String prefix = "";

	private boolean toolCalls;

	private @Nullable LlmStreamInterruptedException interruption;

	GatewayCall(String route, List<LlmEndpoint> endpoints, ChatRequest request, GatewayContext gateway,
			Observation observation) {
		this.route = route;
		this.endpoints = endpoints;
		this.original = request;
		this.request = request;
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
	 * @return the first answer; empty when none answered, a guard stopped the walk or the deadline
	 * left no room; an error only for a caller error
	 */
	Mono<ChatResponse> live() {
		return ChatWalk.live(this);
	}

	/**
	 * The call as a stream.
	 * @return the chunks; one BUSY chunk when no endpoint could start
	 */
	Flux<ChatChunk> stream() {
		this.streaming = true;
		if (this.hedging != null) {
			this.hedging.recordCall();
		}
		Flux<ChatChunk> chunks = this.gateway.degradation().budget().isTripped() ? busy() : walk(0);
		return observed(chunks);
	}

	private Flux<ChatChunk> walk(int index) {
		if (index >= this.endpoints.size()) {
			return (this.interruption != null) ? Flux.error(this.interruption) : busy();
		}
		LlmEndpoint endpoint = this.endpoints.get(index);
		if (this.hedging == null || index + 1 >= this.endpoints.size()) {
			Tier tier = (index == 0 && this.interruption == null) ? Tier.PRIMARY : Tier.FALLBACK;
			return endpoint.stream(this.request, context(index, CallContext.Race.NONE))
				.map((delta) -> chunk(endpoint, tier, delta))
				.onErrorResume((error) -> next(endpoint, index, error));
		}
		LlmEndpoint next = this.endpoints.get(index + 1);
		ChatRequest request = this.request;
		HedgePolicy hedging = this.hedging;
		Hedge<CompletionDelta> hedge = new Hedge<>((race) -> endpoint.stream(request, context(index, race)),
				(race) -> next.stream(request, context(index + 1, race)), hedging.delayNanos(endpoint),
				next::admitsCalls, hedging, (outcome) -> hedged(hedging, outcome, endpoint, next));
		Flux<CompletionDelta> raced = new Flux<>() {

			@Override
			public void subscribe(CoreSubscriber<? super CompletionDelta> actual) {
				hedge.start(actual);
			}

		};
		return raced.map((delta) -> {
			int answering = index + Math.max(0, hedge.winner());
			Tier tier = (answering == 0 && this.interruption == null) ? Tier.PRIMARY : Tier.FALLBACK;
			return chunk(this.endpoints.get(answering), tier, delta);
		}).onErrorResume((error) -> {
			// after a hedge the walk goes on past both endpoints
			int failed = index + ((hedge.winner() > 0 || (hedge.winner() < 0 && hedge.hedged())) ? 1 : 0);
			return next(this.endpoints.get(failed), index + (hedge.hedged() ? 1 : 0), error);
		});
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
		if (completion != null && endpoint.price() != null) {
			this.cost = endpoint.price().costOf(completion.usage());
			if (this.cost != null) {
				this.gateway.degradation().budget().record(this.cost);
			}
		}
		this.gateway.listeners().onAttempt(this.route, endpoint, attempt, completion);
		if (this.streaming && completion != null) {
			// the whole answer, continuation included, once the stream has ended well
			answered(new ChatResponse(this.prefix + completion.content(), endpoint.name(),
					(completion.model() != null) ? completion.model() : endpoint.model(),
					this.attempts.get(0).endpoint().equals(endpoint.name()) ? Tier.PRIMARY : Tier.FALLBACK,
					completion.finishReason(), completion.toolCalls(), completion.usage(), this.cost, elapsed(),
					this.attempts, null, null));
		}
	}

	ChatResponse answer(LlmEndpoint endpoint, Tier tier, Completion completion) {
		return new ChatResponse(completion.content(), endpoint.name(),
				(completion.model() != null) ? completion.model() : endpoint.settings().model(), tier,
				completion.finishReason(), completion.toolCalls(), completion.usage(), this.cost, elapsed(),
				this.attempts, null, null);
	}

	private ChatChunk chunk(LlmEndpoint endpoint, Tier tier, CompletionDelta delta) {
		this.text.append(delta.content());
		this.toolCalls |= !delta.toolCalls().isEmpty();
		return new ChatChunk(delta.content(), endpoint.name(), tier, delta.finishReason(), delta.usage(),
				delta.toolCalls());
	}

	private Flux<ChatChunk> next(LlmEndpoint endpoint, int index, Throwable error) {
		if (error instanceof LlmStreamInterruptedException broken) {
			if (broken.getCause() instanceof LlmUpstreamException cut && cut.outcome() == Outcome.DEADLINE_EXCEEDED) {
				return Flux.error(new LlmStreamInterruptedException(endpoint.name(), Outcome.STREAM_INTERRUPTED,
						this.text.toString(), "The stream did not finish within the request's deadline of "
								+ this.original.deadline() + "; the text received is in partial(). Set a longer deadline "
								+ "on the ChatRequest, or none.", null));
			}
			// The subscriber's partial text is everything relayed so far, over every endpoint.
			this.interruption = new LlmStreamInterruptedException(endpoint.name(), broken.outcome(),
					this.text.toString(), broken.getMessage(), broken.getCause());
			if (!this.gateway.settings().resumeOnFallback() || this.toolCalls) {
				return Flux.error(this.interruption);
			}
			skipped(endpoint, error, "continuing the partial answer on the next endpoint");
			this.prefix = this.text.toString();
			this.request = this.original.toBuilder().assistant(this.prefix).build();
			return walk(index + 1);
		}
		Outcome.Action action = FailureClassifier.outcomeOf(error).action();
		if (action == Outcome.Action.FALL_BACK) {
			skipped(endpoint, error, "trying the next endpoint");
			return walk(index + 1);
		}
		if (action == Outcome.Action.DEGRADE && this.interruption == null) {
			skipped(endpoint, error, "answering BUSY instead of trying the rest");
			return busy();
		}
		// A continuation the next endpoint refused outright still leaves the caller a broken stream.
		return Flux.error((this.interruption != null) ? this.interruption : error);
	}

	private Flux<ChatChunk> busy() {
		return this.gateway.degrader()
			.busy(this.route, this.attempts, elapsed())
			.doOnNext(this::answered)
			.map((busy) -> new ChatChunk(busy.content(), null, Tier.BUSY, busy.finishReason(), null, List.of()))
			.flux();
	}

	void answered(ChatResponse response) {
		GatewayObservations.answered(this.observation, response);
		this.gateway.listeners().onResponse(this.route, response);
	}

	private Flux<ChatChunk> observed(Flux<ChatChunk> call) {
		return call.doOnSubscribe((subscription) -> start())
			.doOnError(this::failed)
			.doFinally((signal) -> stop());
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
		this.gateway.listeners().onError(this.route, error);
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
