package dev.llmresilience.engine;

import java.util.function.BiFunction;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.engine.RouteWalk.Step;
import dev.llmresilience.protocol.Completion;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;

/**
 * The route walk of one chat call: the endpoints its {@link RouteWalk} gives it, in turn, until the
 * first whole answer, which is kept for the cache and returned. When no endpoint answered, the call
 * degrades (cached answer, deferral, BUSY), unless it is a deferred request's background try,
 * which then completes empty. What goes next, and what a failure means, is the {@link RouteWalk}'s
 * to say, as for a stream; what is a chat's own is here: one whole answer, the fallback cache and
 * the deferred tier.
 * <p>
 * It is one subscriber for the whole walk, rather than a chain of Reactor operators per endpoint,
 * because every chat call's success path runs through it (see BENCHMARKS.md).
 */
final class ChatWalk extends Operators.MonoSubscriber<Completion, ChatResponse> {

	private final RouteWalk walk;

	private final GatewayCall call;

	private final Degrader degrader;

	private final @Nullable BiFunction<String, ChatRequest, Mono<ChatResponse>> again;

	private volatile @Nullable Subscription current;

	private @Nullable ChatResponse answer;

	/**
	 * The chat call, walked once it is subscribed (once).
	 * @param walk the call's route walk
	 * @param call the call's record
	 * @param degrading what the call answers when no endpoint did
	 * @return the answer
	 */
	static Mono<ChatResponse> chat(RouteWalk walk, GatewayCall call, Degrading degrading) {
		return new Mono<>() {

			@Override
			public void subscribe(CoreSubscriber<? super ChatResponse> actual) {
				new ChatWalk(actual, walk, call, degrading).start();
			}

		};
	}

	private ChatWalk(CoreSubscriber<? super ChatResponse> actual, RouteWalk walk, GatewayCall call,
			Degrading degrading) {
		super(actual);
		this.walk = walk;
		this.call = call;
		this.degrader = degrading.degrader();
		this.again = degrading.again();
	}

	private void start() {
		this.actual.onSubscribe(this);
		this.call.start();
		if (this.walk.admit() == Step.NEXT) {
			attempt();
		}
		else {
			degrade();
		}
	}

	private void attempt() {
		if (isCancelled()) {
			return;
		}
		this.walk.chat(this.call.request()).subscribe(this);
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
		this.answer = this.call.answer(this.walk.answering(), this.walk.tier(), completion);
	}

	@Override
	public void onComplete() {
		ChatResponse answer = this.answer;
		if (answer == null) {
			if (this.walk.passed() == Step.NEXT) {
				attempt();
			}
			else {
				degrade();
			}
			return;
		}
		this.degrader.remember(this.call.route(), this.call.request(), answer);
		respond(answer);
	}

	@Override
	public void onError(Throwable error) {
		switch (this.walk.failed(error)) {
			case NEXT -> attempt();
			case DEGRADE -> degrade();
			case SURFACE -> fail(error);
		}
	}

	private void degrade() {
		this.walk.release();
		BiFunction<String, ChatRequest, Mono<ChatResponse>> again = this.again;
		if (again == null) {
			this.call.stop();
			this.actual.onComplete();
			return;
		}
		String route = this.call.route();
		this.degrader
			.chat(route, this.call.request(), this.call.attempts(), this.call.elapsed(),
					(request) -> again.apply(route, request))
			.subscribe(this::respond, this::fail);
	}

	private void respond(ChatResponse answer) {
		this.walk.release();
		if (this.again != null) {
			this.call.answered(answer);
		}
		complete(answer);
		this.call.stop();
	}

	private void fail(Throwable error) {
		this.walk.release();
		if (this.again != null) {
			this.call.failed(error);
		}
		this.actual.onError(error);
		this.call.stop();
	}

	@Override
	public void cancel() {
		super.cancel();
		this.walk.release();
		Subscription current = this.current;
		if (current != null) {
			current.cancel();
		}
		this.call.stop();
	}

	/**
	 * What a chat call answers when no endpoint did, the same for every call of a gateway: one for
	 * its callers' calls, one for the deferred queue's background tries.
	 *
	 * @param degrader the degraded tiers (cached answer, deferral, BUSY), and the cache each live
	 * answer is kept in
	 * @param again how the deferred queue asks a route again later (the gateway's background try),
	 * or {@code null} for a background try itself: it then completes empty instead of degrading, and
	 * tells neither the observation nor the listeners of its end
	 */
	record Degrading(Degrader degrader, @Nullable BiFunction<String, ChatRequest, Mono<ChatResponse>> again) {
	}

}
