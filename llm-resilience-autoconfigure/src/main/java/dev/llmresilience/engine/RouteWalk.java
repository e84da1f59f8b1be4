package dev.llmresilience.engine;

import java.util.List;
import java.util.Objects;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.gateway.LlmGatewayListener.HedgeOutcome;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.CorePublisher;

/**
 * The decisions of one call's walk over its route, the same for a chat and a stream: the guards at
 * the start, which endpoint goes next and whether it is hedged on the one after it, and, once that
 * endpoint (or hedged pair) has answered or failed, which endpoint it was, what its failure means
 * and where the walk goes on. {@link ChatWalk} and {@link StreamWalk} ask it and keep only what
 * their shape does differently, as Failsafe's {@code PolicyExecutor} serves its synchronous and
 * asynchronous executions. It calls neither back: the attempts it starts report to the call's
 * {@link GatewayCall}, and the hedges it starts to the route's {@link HedgePolicy}.
 */
final class RouteWalk {

	private static final Shape<Completion> CHAT = LlmEndpoint::chat;

	private static final Shape<CompletionDelta> STREAM = LlmEndpoint::stream;

	private static final Log logger = LogFactory.getLog(RouteWalk.class);

	private final GatewayCall call;

	private final List<LlmEndpoint> endpoints;

	private final Guards guards;

	private final @Nullable HedgePolicy hedging;

	private final ConfigurationWarnings warnings;

	// the endpoint tried now, or the first of the hedged pair tried now
	private int index;

	private @Nullable Hedge<?> hedge;

	// the last endpoint tried let go of the call when its breaker opened: the next one may keep it waiting for a slot
	private boolean released;

	// the prompt-size bucket of the request the walk sends now, which its first-token times are recorded in
	// (a byte: it fits in the object's padding, so that the walk takes no more bytes for it)
	private byte promptSize = PromptSizeTimes.NONE;

	// the gateway-wide limit's permit, held while the route is walked
	private @Nullable Runnable permit;

	/**
	 * Create the walk of one call.
	 * @param call the call's record
	 * @param endpoints the route's endpoints in the order this call tries them
	 * @param guards the guards over all endpoints
	 * @param hedging the route's hedging, or {@code null} when it does not hedge
	 * @param warnings the throttle of configuration warnings
	 */
	RouteWalk(GatewayCall call, List<LlmEndpoint> endpoints, Guards guards, @Nullable HedgePolicy hedging,
			ConfigurationWarnings warnings) {
		this.call = call;
		this.endpoints = endpoints;
		this.guards = guards;
		this.hedging = hedging;
		this.warnings = warnings;
	}

	/**
	 * The guards, in order: the daily budget, then the limit on calls in flight (whose permit is
	 * held until {@link #release()}); only a call they let through counts toward the route's hedge
	 * budget, since a call refused before any endpoint was tried takes no share of it.
	 * @return {@link Step#NEXT} when the walk may start on its first endpoint; {@link Step#DEGRADE}
	 * when a guard refused the call (a refusal by the limit is in its attempts)
	 */
	Step admit() {
		if (this.guards.budget().isTripped()) {
			return Step.DEGRADE;
		}
		Runnable permit = this.guards.limit().tryAcquire();
		if (permit == null) {
			this.call.refused(this.endpoints.get(0));
			return Step.DEGRADE;
		}
		this.permit = permit;
		if (this.hedging != null) {
			this.hedging.recordCall();
		}
		return this.endpoints.isEmpty() ? Step.DEGRADE : Step.NEXT;
	}

	/** Give back the limit's permit, if held; more than once is once. */
	void release() {
		Runnable permit = this.permit;
		if (permit != null) {
			permit.run();
		}
	}

	/**
	 * Ask the endpoint the walk is at for a whole answer: alone, or raced against the next one by a
	 * {@link Hedge} when {@link #hedges()}.
	 * @param request the request
	 * @return the call, to subscribe once
	 */
	CorePublisher<? extends Completion> chat(ChatRequest request) {
		this.promptSize = (byte) PromptSizeTimes.bucket(request);
		if (hedges()) {
			return hedge(request, CHAT);
		}
		return this.endpoints.get(this.index).chat(request, context(this.index, CallContext.Race.NONE));
	}

	/**
	 * Stream from the endpoint the walk is at: alone, or raced against the next one by a
	 * {@link Hedge} when {@link #hedges()}.
	 * @param request the request as this endpoint is sent it
	 * @return the call, to subscribe once
	 */
	CorePublisher<? extends CompletionDelta> stream(ChatRequest request) {
		this.promptSize = (byte) PromptSizeTimes.bucket(request);
		if (hedges()) {
			return hedge(request, STREAM);
		}
		return this.endpoints.get(this.index).stream(request, context(this.index, CallContext.Race.NONE));
	}

	// whether the endpoint the walk is at is hedged on the next one: the route hedges, and there is one
	private boolean hedges() {
		return this.hedging != null && this.index + 1 < this.endpoints.size();
	}

	// kept apart from chat and stream, whose unhedged call is every call's path and stays small
	private <T> Hedge<T> hedge(ChatRequest request, Shape<T> shape) {
		HedgePolicy hedging = Objects.requireNonNull(this.hedging);
		int at = this.index;
		LlmEndpoint endpoint = this.endpoints.get(at);
		LlmEndpoint next = this.endpoints.get(at + 1);
		Hedge<T> hedge = new Hedge<>((race) -> shape.call(endpoint, request, context(at, race)),
				(race) -> shape.call(next, request, context(at + 1, race)), hedging.delayNanos(endpoint, this.promptSize),
				next::admitsCalls, hedging, (outcome) -> hedged(hedging, outcome, endpoint, next));
		this.hedge = hedge;
		return hedge;
	}

	/**
	 * The endpoint whose answer the walk is receiving: the one it is at, or the next one when its
	 * hedge won.
	 * @return the endpoint
	 */
	LlmEndpoint answering() {
		return this.endpoints.get(answeringIndex());
	}

	/**
	 * The tier of the answer the walk is receiving (see {@link #tier(int)}).
	 * @return the tier
	 */
	Tier tier() {
		return tier(answeringIndex());
	}

	/**
	 * The tier of an answer by its endpoint's place in this call's order: {@link Tier#PRIMARY} from
	 * the endpoint that goes first, {@link Tier#FALLBACK} from any later one (a fallback, a hedge
	 * that won, a broken stream's continuation).
	 * @param index the endpoint's place
	 * @return the tier
	 */
	static Tier tier(int index) {
		return (index == 0) ? Tier.PRIMARY : Tier.FALLBACK;
	}

	/**
	 * The endpoint whose failure the walk has just received: the one it is at, or the next one when
	 * the hedged pair's failure was the hedge's.
	 * @return the endpoint
	 */
	LlmEndpoint failing() {
		Hedge<?> hedge = this.hedge;
		return this.endpoints.get((hedge != null) ? at(hedge.failing()) : this.index);
	}

	/**
	 * What a failure of the endpoint (or hedged pair) tried means, the walk moved past it: a
	 * failure the gateway falls back on goes on to the next endpoint, one that degrades stops the
	 * walk, any other is the caller's.
	 * @param error the failure
	 * @return {@link Step#NEXT} when there is a next endpoint to try; {@link Step#DEGRADE} when the
	 * walk is over without an answer; {@link Step#SURFACE} when the failure is the caller's
	 */
	Step failed(Throwable error) {
		LlmEndpoint failed = failing();
		Outcome outcome = FailureClassifier.outcomeOf(error);
		Outcome.Action action = outcome.action();
		this.released = outcome == Outcome.RELEASED;
		pass();
		if (action == Outcome.Action.FALL_BACK) {
			skipped(failed, error, "trying the next endpoint");
			return hasEndpoint() ? Step.NEXT : Step.DEGRADE;
		}
		if (action == Outcome.Action.DEGRADE) {
			skipped(failed, error, "degrading instead of trying the rest");
			return Step.DEGRADE;
		}
		return Step.SURFACE;
	}

	/**
	 * A stream that broke after its first token, continued on the next endpoint: the walk moved
	 * past the endpoint (or pair) that broke.
	 * @param error the break
	 * @return {@link Step#NEXT} when there is a next endpoint to continue on, else {@link Step#DEGRADE}
	 */
	Step continued(Throwable error) {
		skipped(failing(), error, "continuing the partial answer on the next endpoint");
		pass();
		return hasEndpoint() ? Step.NEXT : Step.DEGRADE;
	}

	/**
	 * The endpoint (or pair) tried ended with no answer and no failure: the walk moved past it.
	 * @return {@link Step#NEXT} when there is a next endpoint to try, else {@link Step#DEGRADE}
	 */
	Step passed() {
		pass();
		return hasEndpoint() ? Step.NEXT : Step.DEGRADE;
	}

	// the endpoint the walk is at, or the one after it, by the hedge's side
	private int at(Hedge.Side side) {
		return this.index + ((side == Hedge.Side.SECOND) ? 1 : 0);
	}

	private int answeringIndex() {
		Hedge<?> hedge = this.hedge;
		return (hedge != null) ? at(hedge.answering()) : this.index;
	}

	// past the endpoint tried, and the one a hedge was sent to
	private void pass() {
		Hedge<?> hedge = this.hedge;
		this.index += (hedge != null) ? hedge.endpointsCovered() : 1;
		this.hedge = null;
	}

	private boolean hasEndpoint() {
		return this.index < this.endpoints.size();
	}

	private CallContext context(int index, CallContext.Race race) {
		Leg leg = new Leg(index);
		return new CallContext(leg, this.call.observation(), this.call.deadlineNanos(), this.call.streamDeadlineNanos(),
				this.guards.calls(), leg, race, this.released, this.promptSize);
	}

	// A hedge that was sent or refused: to the route's counts and the call's listeners.
	private void hedged(HedgePolicy policy, HedgeOutcome outcome, LlmEndpoint first, LlmEndpoint second) {
		policy.count(outcome);
		this.call.hedged(outcome, first, second);
	}

	private void skipped(LlmEndpoint endpoint, Throwable error, String next) {
		Outcome outcome = FailureClassifier.outcomeOf(error);
		if (outcome == Outcome.CONFIGURATION_ERROR) {
			this.warnings.warn(endpoint.name(), error);
		}
		else if (logger.isDebugEnabled()) {
			logger.debug("Endpoint '" + endpoint.name() + "' failed with " + outcome + "; " + next + " of route '"
					+ this.call.route() + "': " + error.getMessage());
		}
	}

	/**
	 * How a call's shape calls one endpoint, for the two sides of a hedge.
	 *
	 * @param <T> what the call hands on
	 */
	@FunctionalInterface
	private interface Shape<T> {

		/**
		 * Call an endpoint.
		 * @param endpoint the endpoint
		 * @param request the request
		 * @param context what the gateway call shares with it
		 * @return the call
		 */
		CorePublisher<? extends T> call(LlmEndpoint endpoint, ChatRequest request, CallContext context);

	}

	/** Where the walk goes next. */
	enum Step {

		/** Call the endpoint the walk is now at ({@link #chat}, {@link #stream}). */
		NEXT,

		/** Try no further endpoint: the call degrades, having no answer. */
		DEGRADE,

		/** The failure is the caller's (an invalid request, say): it is handed on as it is. */
		SURFACE

	}

	/**
	 * The guards over all endpoints.
	 *
	 * @param budget the daily budget: once spent, no call walks its route
	 * @param limit the limit on gateway calls in flight
	 * @param calls the call-volume guard every upstream attempt takes a permit from
	 */
	record Guards(BudgetGuard budget, ConcurrencyLimit limit, CallVolumeGuard calls) {
	}

	/**
	 * What one endpoint's attempts tell the call: each attempt as it ends (with the tier of its
	 * answer, for a stream whose answer it is), and whether a later endpoint would take the call now.
	 */
	private final class Leg implements BiConsumer<Attempt, @Nullable Completion>, BooleanSupplier {

		private final int index;

		Leg(int index) {
			this.index = index;
		}

		@Override
		public void accept(Attempt attempt, @Nullable Completion completion) {
			RouteWalk.this.call.attempted(RouteWalk.this.endpoints.get(this.index), tier(this.index), attempt,
					completion);
		}

		@Override
		public boolean getAsBoolean() {
			List<LlmEndpoint> endpoints = RouteWalk.this.endpoints;
			for (int i = this.index + 1; i < endpoints.size(); i++) {
				if (endpoints.get(i).admitsCalls()) {
					return true;
				}
			}
			return false;
		}

	}

}
