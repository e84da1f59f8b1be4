package dev.llmresilience.openaiapi;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import dev.llmresilience.engine.EndpointRegistry;
import dev.llmresilience.engine.LlmEndpoint;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;

/**
 * When a route may answer again: the soonest moment one of its endpoints' circuit breakers lets a
 * call through. An open breaker does so once its {@code wait-duration-in-open-state} has passed
 * since it opened; a closed or half-open one already does (what made the call busy then, a full
 * bulkhead or failed attempts, may clear at once); a breaker forced open never does by itself.
 * This tells a busy answer's {@code retry-after}.
 */
final class BreakerWaits {

	/** The wait advised when a breaker already lets calls through. */
	static final Duration SOON = Duration.ofSeconds(1);

	private final EndpointRegistry endpoints;

	private final Clock clock;

	private final Map<String, Instant> openedAt = new ConcurrentHashMap<>();

	/**
	 * Start following every endpoint's breaker.
	 * @param endpoints the endpoints and routes
	 * @param clock the clock that times the breakers' openings
	 */
	public BreakerWaits(EndpointRegistry endpoints, Clock clock) {
		this.endpoints = endpoints;
		this.clock = clock;
		for (LlmEndpoint endpoint : endpoints.endpoints()) {
			endpoint.circuitBreaker().getEventPublisher().onStateTransition((event) -> {
				if (event.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
					this.openedAt.put(endpoint.name(), clock.instant());
				}
			});
		}
	}

	/**
	 * How long until one of a route's endpoints lets a call through.
	 * @param route the route's name
	 * @return the wait (zero or more), or empty when no breaker of the route will by itself (all
	 * forced open by an operator) or the route is unknown
	 */
	public Optional<Duration> untilNextCall(String route) {
		List<LlmEndpoint> members = this.endpoints.route(route);
		if (members == null) {
			return Optional.empty();
		}
		Optional<Duration> soonest = Optional.empty();
		for (LlmEndpoint endpoint : members) {
			Optional<Duration> wait = waitOf(endpoint);
			if (wait.isPresent() && (soonest.isEmpty() || wait.get().compareTo(soonest.get()) < 0)) {
				soonest = wait;
			}
		}
		return soonest;
	}

	private Optional<Duration> waitOf(LlmEndpoint endpoint) {
		return switch (endpoint.circuitBreaker().getState()) {
			case OPEN -> {
				Duration open = endpoint.settings().circuitBreaker().waitDurationInOpenState();
				Instant since = this.openedAt.get(endpoint.name());
				Duration left = (since != null) ? open.minus(Duration.between(since, this.clock.instant())) : open;
				yield Optional.of(left.isNegative() ? Duration.ZERO : left);
			}
			case FORCED_OPEN -> Optional.empty();
			default -> Optional.of(SOON);
		};
	}

}
