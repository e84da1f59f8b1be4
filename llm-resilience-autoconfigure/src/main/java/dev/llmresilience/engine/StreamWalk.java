package dev.llmresilience.engine;

import java.util.List;

import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.engine.RouteWalk.Step;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.CompletionDelta;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * The route walk of one streamed call: it relays the chunks of the first endpoint that streams its
 * first token, among those its {@link RouteWalk} gives it in turn. When the stream breaks after
 * that it is never restarted from the beginning: the subscriber gets an
 * {@link LlmStreamInterruptedException} with the text so far, or, with {@code resumeOnFallback},
 * the route's next endpoints are asked to continue the partial answer (sent as an assistant
 * message) and only the continuation is relayed, as {@link Tier#FALLBACK}. When no endpoint could
 * start, the stream is one BUSY chunk. What goes next, and what a failure means, is the
 * {@link RouteWalk}'s to say, as for a chat.
 */
final class StreamWalk {

	private final RouteWalk walk;

	private final GatewayCall call;

	private final Degrader degrader;

	private final boolean resumeOnFallback;

	private final StringBuilder text = new StringBuilder();

	private ChatRequest request;

	private boolean toolCalls;

	private @Nullable LlmStreamInterruptedException interruption;

	/**
	 * Create the walk of a streamed call; {@link #start()} gives its chunks.
	 * @param walk the call's route walk
	 * @param call the call's record
	 * @param degrader what answers BUSY when no endpoint could start
	 * @param resumeOnFallback continue a stream that broke after its first token on the next endpoint
	 */
	StreamWalk(RouteWalk walk, GatewayCall call, Degrader degrader, boolean resumeOnFallback) {
		this.walk = walk;
		this.call = call;
		this.degrader = degrader;
		this.resumeOnFallback = resumeOnFallback;
		this.request = call.request();
	}

	/**
	 * The call's chunks, the guards passed; a stream holds the limit's permit until it ends.
	 * @return the chunks; one BUSY chunk when no endpoint could start
	 */
	Flux<ChatChunk> start() {
		Flux<ChatChunk> chunks = (this.walk.admit() == Step.NEXT)
				// given back before the end travels on: a caller that asks again the moment it has it finds it free
				? walk().doOnTerminate(this.walk::release).doOnCancel(this.walk::release) : busy();
		return chunks.doOnSubscribe((subscription) -> this.call.start())
			.doOnError(this.call::failed)
			.doFinally((signal) -> this.call.stop());
	}

	private Flux<ChatChunk> walk() {
		return Flux.from(this.walk.stream(this.request))
			.map(this::chunk)
			.onErrorResume(this::failed);
	}

	private ChatChunk chunk(CompletionDelta delta) {
		this.text.append(delta.content());
		this.toolCalls |= !delta.toolCalls().isEmpty();
		return new ChatChunk(delta.content(), this.walk.answering().name(), this.walk.tier(), delta.finishReason(),
				delta.usage(), delta.toolCalls());
	}

	private Flux<ChatChunk> failed(Throwable error) {
		if (error instanceof LlmStreamInterruptedException broken) {
			return broke(broken);
		}
		return switch (this.walk.failed(error)) {
			case NEXT -> walk();
			case DEGRADE -> (this.interruption != null) ? Flux.error(this.interruption) : busy();
			// a continuation the next endpoint refused outright still leaves the caller a broken stream
			case SURFACE -> Flux.error((this.interruption != null) ? this.interruption : error);
		};
	}

	// A stream that broke after its first token: never restarted, at most continued.
	private Flux<ChatChunk> broke(LlmStreamInterruptedException broken) {
		String endpoint = this.walk.failing().name();
		if (broken.getCause() instanceof LlmUpstreamException cut && cut.outcome() == Outcome.DEADLINE_EXCEEDED) {
			return Flux.error(new LlmStreamInterruptedException(endpoint, Outcome.STREAM_INTERRUPTED,
					this.text.toString(), "The stream did not finish within the request's deadline of "
							+ this.call.request().deadline() + "; the text received is in partial(). Set a longer "
							+ "deadline on the ChatRequest, or none.", null));
		}
		// The subscriber's partial text is everything relayed so far, over every endpoint.
		LlmStreamInterruptedException interruption = new LlmStreamInterruptedException(endpoint, broken.outcome(),
				this.text.toString(), broken.getMessage(), broken.getCause());
		this.interruption = interruption;
		if (!this.resumeOnFallback || this.toolCalls) {
			return Flux.error(interruption);
		}
		String relayed = this.text.toString();
		this.call.continuing(relayed);
		this.request = this.call.request().toBuilder().assistant(relayed).build();
		return (this.walk.continued(broken) == Step.NEXT) ? walk() : Flux.error(interruption);
	}

	private Flux<ChatChunk> busy() {
		return this.degrader.busy(this.call.route(), this.call.attempts(), this.call.elapsed())
			.doOnNext(this.call::answered)
			.map((busy) -> new ChatChunk(busy.content(), null, Tier.BUSY, busy.finishReason(), null, List.of()))
			.flux();
	}

}
