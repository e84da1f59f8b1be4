package dev.llmresilience.engine;

import java.io.IOException;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.llmresilience.chat.ChatRequest;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.chat.Usage;
import dev.llmresilience.failure.LlmInvalidRequestException;
import dev.llmresilience.failure.LlmUpstreamException;
import dev.llmresilience.protocol.Completion;
import dev.llmresilience.protocol.LlmClient;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import reactor.core.publisher.Mono;

/**
 * An in-process upstream for the concurrency hammer: answers at once or after a millisecond or two,
 * fails at a rate that can change at run time in every way the classifier knows (statuses, a reset,
 * a hang cut by the timeout, empty and unreadable answers, the content filter), and counts the calls
 * in flight, overall and in each half-open episode of its endpoint's breaker (a probe of one episode
 * that hangs may still be in flight when the next begins: it counts for its own). Outcomes the breaker ignores
 * (invalid request, content filter) come at once: a breaker does not count an ignored outcome of a
 * call it let through before it half-opened (see {@code CircuitBreakerPermit}), so one that came
 * late would be reported by the gateway without a breaker event to match. A call leaves the count before
 * its signal travels downstream (on cancel, before the cancel reaches it), so a permit freed by that
 * signal can never make the count look higher than it was.
 */
final class HammerClient implements LlmClient {

	/** The prompt of a request every upstream refuses as invalid (HTTP 400). */
	static final String INVALID_PROMPT = "INVALID";

	private final String name;

	private final AtomicReference<CircuitBreaker> breaker = new AtomicReference<>();

	private volatile double failureRate;

	private final AtomicInteger inFlight = new AtomicInteger();

	private final AtomicInteger maxInFlight = new AtomicInteger();

	private final Map<Object, AtomicInteger> halfOpenInFlight = Collections.synchronizedMap(new IdentityHashMap<>());

	private final AtomicInteger maxHalfOpenInFlight = new AtomicInteger();

	private final AtomicInteger halfOpenCalls = new AtomicInteger();

	private final AtomicInteger calls = new AtomicInteger();

	private final AtomicInteger faults = new AtomicInteger();

	private final AtomicInteger invalid = new AtomicInteger();

	HammerClient(String name) {
		this.name = name;
	}

	void breaker(CircuitBreaker breaker) {
		this.breaker.set(breaker);
	}

	void failureRate(double failureRate) {
		this.failureRate = failureRate;
	}

	@Override
	public Mono<Completion> chat(ChatRequest request) {
		return Mono.defer(() -> {
			CircuitBreaker breaker = this.breaker.get();
			// Resilience4j gives each half-open episode a window of its own: it names the episode
			AtomicInteger episode = (breaker.getState() == CircuitBreaker.State.HALF_OPEN)
					? this.halfOpenInFlight.computeIfAbsent(breaker.getMetrics(), (window) -> new AtomicInteger()) : null;
			this.calls.incrementAndGet();
			this.maxInFlight.accumulateAndGet(this.inFlight.incrementAndGet(), Math::max);
			if (episode != null) {
				this.halfOpenCalls.incrementAndGet();
				this.maxHalfOpenInFlight.accumulateAndGet(episode.incrementAndGet(), Math::max);
			}
			AtomicBoolean left = new AtomicBoolean();
			Runnable leave = () -> {
				if (left.compareAndSet(false, true)) {
					this.inFlight.decrementAndGet();
					if (episode != null) {
						episode.decrementAndGet();
					}
				}
			};
			return answer(request).doOnTerminate(leave).doOnCancel(leave);
		});
	}

	private Mono<Completion> answer(ChatRequest request) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		Mono<Completion> answer;
		boolean ignored = false;
		if (INVALID_PROMPT.equals(request.messages().get(0).content())) {
			ignored = true;
			this.invalid.incrementAndGet();
			answer = Mono.error(new LlmInvalidRequestException("The provider refused the request as invalid (HTTP 400)",
					this.name, 400, "invalid_request_error"));
		}
		else if (random.nextDouble() < this.failureRate) {
			int kind = random.nextInt(100);
			ignored = kind >= 95;
			this.faults.incrementAndGet();
			answer = failure(kind);
		}
		else {
			answer = Mono.just(new Completion("answer from " + this.name, this.name + "-model", "stop", List.of(),
					new Usage(3, 2)));
		}
		int delay = random.nextInt(3); // 0, 1 or 2 ms: a third answer synchronously
		return (delay == 0 || ignored) ? answer : Mono.delay(Duration.ofMillis(delay)).then(answer);
	}

	private Mono<Completion> failure(int kind) {
		if (kind < 35) {
			return upstream(Outcome.SERVER_ERROR, 500);
		}
		if (kind < 55) {
			return Mono.error(new IOException("Connection reset by peer"));
		}
		if (kind < 65) {
			return upstream(Outcome.RATE_LIMITED, 429);
		}
		if (kind < 75) {
			return upstream(Outcome.EMPTY_RESPONSE, 200);
		}
		if (kind < 85) {
			return upstream(Outcome.MALFORMED_RESPONSE, 200);
		}
		if (kind < 95) {
			return Mono.never(); // cut by the endpoint's timeout
		}
		return upstream(Outcome.CONTENT_FILTERED, 200);
	}

	private Mono<Completion> upstream(Outcome outcome, int status) {
		return Mono.error(new LlmUpstreamException(this.name, outcome, status, null, "fake " + outcome, null));
	}

	int inFlight() {
		return this.inFlight.get();
	}

	int maxInFlight() {
		return this.maxInFlight.get();
	}

	int maxHalfOpenInFlight() {
		return this.maxHalfOpenInFlight.get();
	}

	int halfOpenCalls() {
		return this.halfOpenCalls.get();
	}

	int calls() {
		return this.calls.get();
	}

	int faults() {
		return this.faults.get();
	}

	int invalid() {
		return this.invalid.get();
	}

}
