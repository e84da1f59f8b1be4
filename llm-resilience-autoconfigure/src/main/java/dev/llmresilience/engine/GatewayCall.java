package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGatewayListener.HedgeOutcome;
import dev.llmresilience.protocol.Completion;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

/**
 * The record of one gateway call, chat or stream: its request, its deadline, every attempt as it
 * ends (each successful one's cost charged to the daily budget), and its end, told to its
 * observation and the gateway's listeners. The deadline bounds a chat call whole and a stream until
 * its first token; the request's own deadline also bounds a whole stream. A stream's answer is the
 * whole of the streamed attempt that ended well (after any text relayed before a continuation), so
 * it is told when that attempt ends; a chat's answer is told by its walk, once it is kept for the
 * cache. It knows nothing of the walk: {@link RouteWalk} and the walks write to it.
 */
final class GatewayCall {

	private static final AtomicIntegerFieldUpdater<GatewayCall> STOPPED = AtomicIntegerFieldUpdater
		.newUpdater(GatewayCall.class, "stopped");

	private final String route;

	private final ChatRequest request;

	private final boolean stream;

	private final Shared shared;

	private final Observation observation;

	private final long start = now();

	private final long deadlineNanos;

	private final long streamDeadlineNanos;

	private final List<Attempt> attempts = new CopyOnWriteArrayList<>();

	private volatile @Nullable BigDecimal cost;

	// the text a stream relayed before it broke and was continued on another endpoint
	private volatile String prefix = "";

	private volatile int stopped;

	/**
	 * Create the record of a call.
	 * @param route the route
	 * @param request the request
	 * @param stream whether the call is a stream (its answer is then told as its attempt ends)
	 * @param shared what the calls of the gateway share
	 * @param observation the call's observation, not started
	 */
	GatewayCall(String route, ChatRequest request, boolean stream, Shared shared, Observation observation) {
		this.route = route;
		this.request = request;
		this.stream = stream;
		this.shared = shared;
		this.observation = observation;
		Duration deadline = (request.deadline() != null) ? request.deadline() : shared.deadline();
		this.deadlineNanos = plus(this.start, deadline);
		this.streamDeadlineNanos = (request.deadline() != null) ? plus(this.start, request.deadline()) : Long.MAX_VALUE;
	}

	/**
	 * Each attempt as it ends: to the listeners, a successful one's tokens to the budget, and a
	 * stream's successful attempt as the call's answer.
	 * @param endpoint the attempt's endpoint
	 * @param tier the tier of an answer from that endpoint
	 * @param attempt the attempt
	 * @param completion its whole answer when it succeeded, else {@code null}
	 */
	void attempted(LlmEndpoint endpoint, Tier tier, Attempt attempt, @Nullable Completion completion) {
		EndpointSettings settings = endpoint.settings();
		this.attempts.add(attempt);
		this.cost = null;
		if (completion != null && settings.routing().price() != null) {
			this.cost = settings.routing().price().costOf(completion.usage());
			if (this.cost != null) {
				this.shared.budget().record(this.cost);
			}
		}
		this.shared.listeners().onAttempt(this.route, settings, attempt, completion);
		if (this.stream && completion != null) {
			answered(answer(endpoint, tier, completion));
		}
	}

	// The gateway-wide limit refused the call: one attempt, refused, on the endpoint it would have tried first.
	void refused(LlmEndpoint first) {
		Attempt refused = new Attempt(first.name(), Outcome.GATEWAY_FULL, Duration.ZERO);
		this.attempts.add(refused);
		this.shared.listeners().onAttempt(this.route, first.settings(), refused, null);
	}

	// A hedge that was sent or refused: to the listeners.
	void hedged(HedgeOutcome outcome, LlmEndpoint first, LlmEndpoint second) {
		this.shared.listeners().onHedge(this.route, first.name(), second.name(), outcome);
	}

	/**
	 * A stream broke after its first token and goes on on another endpoint: the answer is what it
	 * relayed so far, then the continuation.
	 * @param relayed the text relayed so far
	 */
	void continuing(String relayed) {
		this.prefix = relayed;
	}

	/**
	 * The call's answer from an endpoint.
	 * @param endpoint the endpoint that answered
	 * @param tier its tier ({@link RouteWalk#tier(int)})
	 * @param completion its answer
	 * @return the response
	 */
	ChatResponse answer(LlmEndpoint endpoint, Tier tier, Completion completion) {
		String prefix = this.prefix;
		String content = prefix.isEmpty() ? completion.content() : prefix + completion.content();
		String model = (completion.model() != null) ? completion.model()
				: endpoint.settings().upstream().model();
		// The canonical constructor, not ChatResponse.builder(): every successful chat comes here,
		// and the builder is one more object per call wherever escape analysis does not remove it,
		// which it does not always do (BENCHMARKS.md, AllocationCensus). A live answer has neither a
		// ticket nor an age.
		return new ChatResponse(content, endpoint.name(), model, tier, completion.finishReason(),
				completion.toolCalls(), completion.usage(), this.cost, elapsed(), this.attempts, null, null);
	}

	// The observation stops once the answer is known, before it travels on: its key values (the
	// convention's, taken at stop) and its timer are there when the caller has the answer.
	void answered(ChatResponse response) {
		GatewayObservations.answered(this.observation, response);
		stop();
		this.shared.listeners().onResponse(this.route, response);
	}

	void failed(Throwable error) {
		this.observation.error(error);
		stop();
		this.shared.listeners().onError(this.route, error);
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

	Duration elapsed() {
		return Duration.ofNanos(now() - this.start);
	}

	String route() {
		return this.route;
	}

	ChatRequest request() {
		return this.request;
	}

	List<Attempt> attempts() {
		return this.attempts;
	}

	Observation observation() {
		return this.observation;
	}

	long deadlineNanos() {
		return this.deadlineNanos;
	}

	long streamDeadlineNanos() {
		return this.streamDeadlineNanos;
	}

	private static long plus(long at, Duration duration) {
		long nanos = duration.toNanos();
		return (Long.MAX_VALUE - at < nanos) ? Long.MAX_VALUE : at + nanos;
	}

	private static long now() {
		return Schedulers.parallel().now(TimeUnit.NANOSECONDS);
	}

	/**
	 * What the calls of one gateway share.
	 *
	 * @param deadline the longest a call may take when its request sets no deadline (for a stream,
	 * until its first chunk)
	 * @param listeners the listeners
	 * @param budget the daily budget each answer's cost is added to
	 */
	record Shared(Duration deadline, Listeners listeners, BudgetGuard budget) {
	}

}
