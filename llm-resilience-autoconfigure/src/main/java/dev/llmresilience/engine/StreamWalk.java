package dev.llmresilience.engine;

import java.util.List;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;

/**
 * The route walk of one streamed call: it relays the chunks of the first endpoint that streams its
 * first token. When the stream breaks after that it is never restarted from the beginning: the
 * subscriber gets an {@link LlmStreamInterruptedException} with the text so far, or, with
 * {@code resumeOnFallback}, the route's next endpoints are asked to continue the partial answer
 * (sent as an assistant message) and only the continuation is relayed, as {@link Tier#FALLBACK}. On
 * a route that hedges, each endpoint with a next one is raced against it by a {@link Hedge}.
 */
final class StreamWalk {

	private final GatewayCall call;

	private final List<LlmEndpoint> endpoints;

	private final @Nullable HedgePolicy hedging;

	private final StringBuilder text = new StringBuilder();

	private ChatRequest request;

	private String prefix = "";

	private boolean toolCalls;

	private @Nullable LlmStreamInterruptedException interruption;

	StreamWalk(GatewayCall call) {
		this.call = call;
		this.endpoints = call.endpoints();
		this.hedging = call.hedging();
		this.request = call.original();
	}

	Flux<ChatChunk> start() {
		if (this.hedging != null) {
			this.hedging.recordCall();
		}
		if (this.call.gateway().degradation().budget().isTripped()) {
			return busy();
		}
		return this.call.gateway().degradation().limit().admit(Flux.defer(() -> walk(0)), () -> {
			this.call.refused();
			return busy();
		});
	}

	private Flux<ChatChunk> walk(int index) {
		if (index >= this.endpoints.size()) {
			return (this.interruption != null) ? Flux.error(this.interruption) : busy();
		}
		LlmEndpoint endpoint = this.endpoints.get(index);
		if (this.hedging == null || index + 1 >= this.endpoints.size()) {
			Tier tier = tier(index);
			return endpoint.stream(this.request, this.call.context(index, CallContext.Race.NONE))
				.map((delta) -> chunk(endpoint, tier, delta))
				.onErrorResume((error) -> next(endpoint, index, error));
		}
		LlmEndpoint next = this.endpoints.get(index + 1);
		ChatRequest request = this.request;
		HedgePolicy hedging = this.hedging;
		Hedge<CompletionDelta> hedge = new Hedge<>((race) -> endpoint.stream(request, this.call.context(index, race)),
				(race) -> next.stream(request, this.call.context(index + 1, race)), hedging.delayNanos(endpoint),
				next::admitsCalls, hedging, (outcome) -> this.call.hedged(hedging, outcome, endpoint, next));
		Flux<CompletionDelta> raced = new Flux<>() {

			@Override
			public void subscribe(CoreSubscriber<? super CompletionDelta> actual) {
				hedge.start(actual);
			}

		};
		return raced.map((delta) -> {
			int answering = index + Math.max(0, hedge.winner());
			return chunk(this.endpoints.get(answering), tier(answering), delta);
		}).onErrorResume((error) -> {
			// after a hedge the walk goes on past both endpoints
			int failed = index + ((hedge.winner() > 0 || (hedge.winner() < 0 && hedge.hedged())) ? 1 : 0);
			return next(this.endpoints.get(failed), index + (hedge.hedged() ? 1 : 0), error);
		});
	}

	private Tier tier(int index) {
		return (index == 0 && this.interruption == null) ? Tier.PRIMARY : Tier.FALLBACK;
	}

	// The whole answer, continuation included, once the stream has ended well.
	void completed(EndpointSettings endpoint, Completion completion) {
		this.call.answered(new ChatResponse(this.prefix + completion.content(), endpoint.name(),
				(completion.model() != null) ? completion.model() : endpoint.upstream().model(),
				this.call.attempts().get(0).endpoint().equals(endpoint.name()) ? Tier.PRIMARY : Tier.FALLBACK,
				completion.finishReason(), completion.toolCalls(), completion.usage(), this.call.cost(),
				this.call.elapsed(), this.call.attempts(), null, null));
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
								+ this.call.original().deadline() + "; the text received is in partial(). Set a longer "
								+ "deadline on the ChatRequest, or none.", null));
			}
			// The subscriber's partial text is everything relayed so far, over every endpoint.
			this.interruption = new LlmStreamInterruptedException(endpoint.name(), broken.outcome(),
					this.text.toString(), broken.getMessage(), broken.getCause());
			if (!this.call.gateway().settings().resumeOnFallback() || this.toolCalls) {
				return Flux.error(this.interruption);
			}
			this.call.skipped(endpoint, error, "continuing the partial answer on the next endpoint");
			this.prefix = this.text.toString();
			this.request = this.call.original().toBuilder().assistant(this.prefix).build();
			return walk(index + 1);
		}
		Outcome.Action action = FailureClassifier.outcomeOf(error).action();
		if (action == Outcome.Action.FALL_BACK) {
			this.call.skipped(endpoint, error, "trying the next endpoint");
			return walk(index + 1);
		}
		if (action == Outcome.Action.DEGRADE && this.interruption == null) {
			this.call.skipped(endpoint, error, "answering BUSY instead of trying the rest");
			return busy();
		}
		// A continuation the next endpoint refused outright still leaves the caller a broken stream.
		return Flux.error((this.interruption != null) ? this.interruption : error);
	}

	private Flux<ChatChunk> busy() {
		return this.call.gateway()
			.degrader()
			.busy(this.call.route(), this.call.attempts(), this.call.elapsed())
			.doOnNext(this.call::answered)
			.map((busy) -> new ChatChunk(busy.content(), null, Tier.BUSY, busy.finishReason(), null, List.of()))
			.flux();
	}

}
