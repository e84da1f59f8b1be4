package dev.llmresilience.engine;

import java.util.List;
import java.util.function.Function;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.protocol.Completion;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * The route walk of one chat call: the route's endpoints in order (each retrying on its own
 * first), the first whole answer kept for the cache and returned; a failure the gateway falls back
 * on moves to the next endpoint, one that degrades stops the walk, one for the caller (an invalid
 * request) is handed on. When no endpoint answered, the call degrades (cached answer, deferral,
 * BUSY), unless it is a deferred request's background try, which then completes empty. On a route
 * that hedges, each endpoint with a next one is raced against it by a {@link Hedge}.
 * <p>
 * It is one subscriber for the whole walk, rather than a chain of Reactor operators per endpoint,
 * because every chat call's success path runs through it (see BENCHMARKS.md).
 */
final class ChatWalk extends Operators.MonoSubscriber<Completion, ChatResponse> {

	private final GatewayCall call;

	private final @Nullable Function<ChatRequest, Mono<ChatResponse>> again;

	private final List<LlmEndpoint> endpoints;

	private final @Nullable HedgePolicy hedging;

	private int index;

	private @Nullable Hedge<Completion> hedge;

	private volatile @Nullable Subscription current;

	private @Nullable ChatResponse answer;

	// the gateway-wide limit's permit, held while the route is walked
	private @Nullable Runnable permit;

	private ChatWalk(CoreSubscriber<? super ChatResponse> actual, GatewayCall call,
			@Nullable Function<ChatRequest, Mono<ChatResponse>> again) {
		super(actual);
		this.call = call;
		this.again = again;
		this.endpoints = call.endpoints();
		this.hedging = call.hedging();
	}

	/**
	 * The call as chat: the route's first whole answer, else a degraded one.
	 * @param call the call
	 * @param again how the deferred queue asks the route again later
	 * @return the answer
	 */
	static Mono<ChatResponse> chat(GatewayCall call, Function<ChatRequest, Mono<ChatResponse>> again) {
		return new Mono<>() {

			@Override
			public void subscribe(CoreSubscriber<? super ChatResponse> actual) {
				new ChatWalk(actual, call, again).start();
			}

		};
	}

	/**
	 * The route walk alone, as a deferred request's background try makes it.
	 * @param call the call
	 * @return the first answer; empty when none answered, a guard stopped the walk or the deadline
	 * left no room; an error only for a caller error
	 */
	static Mono<ChatResponse> live(GatewayCall call) {
		return new Mono<>() {

			@Override
			public void subscribe(CoreSubscriber<? super ChatResponse> actual) {
				new ChatWalk(actual, call, null).start();
			}

		};
	}

	private void start() {
		this.actual.onSubscribe(this);
		this.call.start();
		if (this.call.gateway().degradation().budget().isTripped()) {
			degrade();
			return;
		}
		this.permit = this.call.gateway().degradation().limit().tryAcquire();
		if (this.permit == null) {
			this.call.refused();
			degrade();
			return;
		}
		if (this.hedging != null) {
			this.hedging.recordCall();
		}
		next(0);
	}

	private void next(int index) {
		if (isCancelled()) {
			return;
		}
		if (index >= this.endpoints.size()) {
			degrade();
			return;
		}
		this.index = index;
		LlmEndpoint endpoint = this.endpoints.get(index);
		if (this.hedging == null || index + 1 >= this.endpoints.size()) {
			this.hedge = null;
			endpoint.chat(this.call.original(), this.call.context(index, CallContext.Race.NONE)).subscribe(this);
			return;
		}
		LlmEndpoint next = this.endpoints.get(index + 1);
		Hedge<Completion> hedge = new Hedge<>((race) -> endpoint.chat(this.call.original(), this.call.context(index, race)),
				(race) -> next.chat(this.call.original(), this.call.context(index + 1, race)),
				this.hedging.delayNanos(endpoint), next::admitsCalls, this.hedging,
				(outcome) -> this.call.hedged(this.hedging, outcome, endpoint, next));
		this.hedge = hedge;
		hedge.start(this);
	}

	@Override
	public void onSubscribe(Subscription subscription) {
		this.current = subscription;
		if (isCancelled()) {
			subscription.cancel();
			return;
		}
		subscription.request(Long.MAX_VALUE);
	}

	@Override
	public void onNext(Completion completion) {
		int answered = this.index + ((this.hedge != null && this.hedge.winner() > 0) ? 1 : 0);
		LlmEndpoint endpoint = this.endpoints.get(answered);
		this.answer = this.call.answer(endpoint, (answered == 0) ? Tier.PRIMARY : Tier.FALLBACK, completion);
	}

	@Override
	public void onComplete() {
		ChatResponse answer = this.answer;
		if (answer == null) {
			next(this.index + 1);
			return;
		}
		this.call.gateway().degrader().remember(this.call.route(), this.call.original(), answer);
		respond(answer);
	}

	@Override
	public void onError(Throwable error) {
		Outcome.Action action = FailureClassifier.outcomeOf(error).action();
		if (action == Outcome.Action.FALL_BACK) {
			boolean both = this.hedge != null && this.hedge.hedged();
			this.call.skipped(this.endpoints.get(this.index + (both ? 1 : 0)), error, "trying the next endpoint");
			next(this.index + (both ? 2 : 1));
		}
		else if (action == Outcome.Action.DEGRADE) {
			degrade();
		}
		else {
			fail(error);
		}
	}

	private void degrade() {
		release();
		if (this.again == null) {
			this.call.stop();
			this.actual.onComplete();
			return;
		}
		this.call.gateway()
			.degrader()
			.chat(this.call.route(), this.call.original(), this.call.attempts(), this.call.elapsed(), this.again)
			.subscribe(this::respond, this::fail);
	}

	private void respond(ChatResponse answer) {
		release();
		if (this.again != null) {
			this.call.answered(answer);
		}
		complete(answer);
		this.call.stop();
	}

	private void fail(Throwable error) {
		release();
		if (this.again != null) {
			this.call.failed(error);
		}
		this.actual.onError(error);
		this.call.stop();
	}

	// given back before the answer travels on: a caller that asks again the moment it has it finds it free
	private void release() {
		Runnable permit = this.permit;
		if (permit != null) {
			permit.run();
		}
	}

	@Override
	public void cancel() {
		super.cancel();
		release();
		Subscription current = this.current;
		if (current != null) {
			current.cancel();
		}
		this.call.stop();
	}

}
