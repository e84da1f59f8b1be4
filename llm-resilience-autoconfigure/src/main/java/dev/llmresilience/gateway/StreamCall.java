package dev.llmresilience.gateway;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatChunk;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.endpoint.EndpointSettings;
import dev.llmresilience.endpoint.LlmEndpoint;
import dev.llmresilience.failure.FailureClassifier;
import dev.llmresilience.failure.LlmStreamInterruptedException;
import dev.llmresilience.failure.LlmUnavailableException;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.CompletionDelta;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * One {@link LlmGateway#stream} call: walks the route like {@code chat} until an endpoint streams
 * its first chunk (each endpoint retries on its own before that, unseen by the subscriber), then
 * relays that endpoint's chunks. When the stream breaks after that, it is never restarted from the
 * beginning: the subscriber gets an {@link LlmStreamInterruptedException} with the text so far, or,
 * with {@code resumeOnFallback}, the route's next endpoints are asked to continue the partial answer
 * (sent as an assistant message) and only the continuation is relayed, as {@link Tier#FALLBACK}.
 * <p>
 * {@code llm.gateway.deadline} bounds the wait for the first chunk (past it: BUSY); after it only
 * the endpoint's idle timeout ends a stream, unless the request set its own {@code deadline}, which
 * bounds the whole stream.
 */
final class StreamCall {

	/** What a stream tells the gateway's listeners: each attempt, and the answer once it is whole. */
	interface StreamListener {

		void onAttempt(String route, EndpointSettings endpoint, Attempt attempt, @Nullable Completion completion);

		void onResponse(String route, ChatResponse response);

		void onError(String route, Throwable error);

	}

	private static final Log logger = LogFactory.getLog(StreamCall.class);

	private final String routeName;

	private final List<LlmEndpoint> route;

	private final ChatRequest original;

	private final GatewaySettings settings;

	private final Degradation degradation;

	private final StreamListener listener;

	private volatile @Nullable String model;

	private volatile @Nullable String finishReason;

	private volatile @Nullable Usage usage;

	private volatile @Nullable BigDecimal cost;

	private final long start = now();

	private final List<Attempt> attempts = new CopyOnWriteArrayList<>();

	private final StringBuilder text = new StringBuilder();

	private volatile boolean started;

	private boolean toolCalls;

	private volatile @Nullable String current;

	private ChatRequest request;

	private @Nullable LlmStreamInterruptedException interruption;

	StreamCall(String routeName, List<LlmEndpoint> route, ChatRequest request, GatewaySettings settings,
			Degradation degradation, StreamListener listener) {
		this.routeName = routeName;
		this.route = route;
		this.original = request;
		this.request = request;
		this.settings = settings;
		this.degradation = degradation;
		this.listener = listener;
	}

	Flux<ChatChunk> run() {
		if (this.degradation.budget().isTripped()) {
			return busy();
		}
		Duration untilFirstChunk = (this.original.deadline() != null) ? this.original.deadline()
				: this.settings.deadline();
		return walk(0).timeout(Mono.delay(untilFirstChunk), this::untilDeadline, Flux.defer(this::deadlineReached));
	}

	private Flux<ChatChunk> walk(int index) {
		if (index >= this.route.size()) {
			return (this.interruption != null) ? Flux.error(this.interruption) : busy();
		}
		LlmEndpoint endpoint = this.route.get(index);
		Tier tier = (index == 0 && this.interruption == null) ? Tier.PRIMARY : Tier.FALLBACK;
		return endpoint.stream(this.request, (attempt) -> attempted(endpoint, attempt), this.degradation.guard())
			.doOnSubscribe((subscription) -> this.current = endpoint.name())
			.map((delta) -> chunk(endpoint, tier, delta))
			.onErrorResume((error) -> next(endpoint, index, error));
	}

	// Each attempt as it ends, to the listeners; a successful one with what it streamed in all.
	private void attempted(LlmEndpoint endpoint, Attempt attempt) {
		this.attempts.add(attempt);
		Completion completion = (attempt.outcome() == Outcome.SUCCESS) ? new Completion(this.text.toString(),
				this.model, this.finishReason, List.of(), this.usage) : null;
		this.listener.onAttempt(this.routeName, endpoint.settings(), attempt, completion);
		if (completion != null) {
			this.listener.onResponse(this.routeName, new ChatResponse(this.text.toString(), endpoint.name(),
					(this.model != null) ? this.model : endpoint.settings().model(),
					(this.attempts.get(0).endpoint().equals(endpoint.name())) ? Tier.PRIMARY : Tier.FALLBACK,
					this.finishReason, List.of(), this.usage, this.cost,
					Duration.ofNanos(now() - this.start), this.attempts, null, null));
		}
	}

	private ChatChunk chunk(LlmEndpoint endpoint, Tier tier, CompletionDelta delta) {
		if (delta.model() != null) {
			this.model = delta.model();
		}
		if (delta.finishReason() != null) {
			this.finishReason = delta.finishReason();
		}
		if (delta.usage() != null) {
			this.usage = delta.usage();
			this.cost = DefaultLlmGateway.cost(endpoint.settings(), delta.usage());
			if (this.cost != null) {
				this.degradation.budget().record(this.cost);
			}
		}
		this.started = true;
		this.text.append(delta.content());
		this.toolCalls |= !delta.toolCalls().isEmpty();
		return new ChatChunk(delta.content(), endpoint.name(), tier, delta.finishReason(), delta.usage(),
				delta.toolCalls());
	}

	private Flux<ChatChunk> next(LlmEndpoint endpoint, int index, Throwable error) {
		if (error instanceof LlmStreamInterruptedException broken) {
			// The subscriber's partial text is everything relayed so far, over every endpoint.
			this.interruption = new LlmStreamInterruptedException(endpoint.name(), broken.outcome(),
					this.text.toString(), broken.getMessage(), broken.getCause());
			if (!this.settings.resumeOnFallback() || this.toolCalls) {
				return Flux.error(this.interruption);
			}
			debug(endpoint, error, "continuing the partial answer on the next endpoint");
			this.request = this.original.toBuilder().assistant(this.text.toString()).build();
			return walk(index + 1);
		}
		if (FailureClassifier.outcomeOf(error).action() == Outcome.Action.FALL_BACK) {
			debug(endpoint, error, "trying the next endpoint");
			return walk(index + 1);
		}
		if (FailureClassifier.outcomeOf(error).action() == Outcome.Action.DEGRADE && this.interruption == null) {
			debug(endpoint, error, "answering BUSY instead of trying the rest");
			return busy();
		}
		// A continuation the next endpoint refused outright still leaves the caller a broken stream.
		return Flux.error((this.interruption != null) ? this.interruption : error);
	}

	private Mono<Long> untilDeadline(ChatChunk chunk) {
		if (this.original.deadline() == null) {
			return Mono.never();
		}
		long left = this.start + this.original.deadline().toNanos() - now();
		return Mono.delay(Duration.ofNanos(Math.max(0, left)));
	}

	private Flux<ChatChunk> deadlineReached() {
		if (!this.started) {
			logger.debug("Stream on route '" + this.routeName + "' had no first chunk within its deadline");
			return busy();
		}
		String endpoint = (this.current != null) ? this.current : this.routeName;
		return Flux.error(new LlmStreamInterruptedException(endpoint, Outcome.STREAM_INTERRUPTED, this.text.toString(),
				"The stream did not finish within the request's deadline of " + this.original.deadline()
						+ "; the text received is in partial(). Set a longer deadline on the ChatRequest, or none.",
				null));
	}

	// The same answer as chat's BUSY, as one chunk.
	private Flux<ChatChunk> busy() {
		List<Attempt> attempts = List.copyOf(this.attempts);
		if (this.settings.busyAsError()) {
			return Flux.error(new LlmUnavailableException(this.routeName, attempts));
		}
		ChatResponse busy = DefaultLlmGateway.busyAnswer(this.settings, attempts, Duration.ofNanos(now() - this.start));
		this.listener.onResponse(this.routeName, busy);
		return Flux.just(new ChatChunk(busy.content(), null, Tier.BUSY, busy.finishReason(), null, List.of()));
	}

	private void debug(LlmEndpoint endpoint, Throwable error, String next) {
		if (logger.isDebugEnabled()) {
			logger.debug("Stream of endpoint '" + endpoint.name() + "' failed with " + FailureClassifier.outcomeOf(error)
					+ "; " + next + " of route '" + this.routeName + "': " + error.getMessage());
		}
	}

	private static long now() {
		return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
	}

}
