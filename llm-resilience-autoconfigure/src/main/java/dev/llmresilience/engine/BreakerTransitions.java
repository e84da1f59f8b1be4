package dev.llmresilience.engine;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.llmresilience.spi.BreakerControl;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Listens to every endpoint's circuit breaker (its Resilience4j event publisher): remembers its last
 * {@value #MAX_TRANSITIONS} state transitions, for {@code /actuator/llmbreakers} and the dashboard,
 * and logs each one with why it happened (the fleet's reason, when shared state moved it): an
 * opening at WARN, a recovery step and a change made by hand at INFO.
 */
final class BreakerTransitions {

	/** How many state transitions each endpoint remembers. */
	public static final int MAX_TRANSITIONS = 10;

	private static final Log logger = LogFactory.getLog(BreakerTransitions.class);

	private final Map<String, Deque<Transition>> history = new LinkedHashMap<>();

	/**
	 * Listen to the breakers of the given endpoints.
	 * @param endpoints the endpoints
	 */
	public BreakerTransitions(EndpointRegistry endpoints) {
		this(endpoints, BreakerControl.LOCAL);
	}

	/**
	 * Listen to the breakers of the given endpoints, which shared state may move too.
	 * @param endpoints the endpoints
	 * @param control says why shared state moves a breaker, while it does
	 */
	public BreakerTransitions(EndpointRegistry endpoints, BreakerControl control) {
		for (LlmEndpoint endpoint : endpoints.endpoints()) {
			Deque<Transition> transitions = new ArrayDeque<>();
			this.history.put(endpoint.name(), transitions);
			CircuitBreaker breaker = endpoint.circuitBreaker();
			breaker.getEventPublisher().onStateTransition((event) -> record(endpoint, transitions, event, control));
		}
	}

	/**
	 * The most recent state transition of an endpoint's breaker.
	 * @param endpoint the endpoint's name
	 * @return the transition, or {@code null} if it never changed state (or the endpoint is unknown)
	 */
	public @Nullable Transition last(String endpoint) {
		Deque<Transition> transitions = this.history.get(endpoint);
		if (transitions == null) {
			return null;
		}
		synchronized (transitions) {
			return transitions.peekLast();
		}
	}

	/**
	 * The most recent state transitions of an endpoint's breaker, oldest first.
	 * @param endpoint the endpoint's name
	 * @return at most {@value #MAX_TRANSITIONS} transitions
	 */
	public List<Transition> recent(String endpoint) {
		Deque<Transition> transitions = this.history.get(endpoint);
		if (transitions == null) {
			return List.of();
		}
		synchronized (transitions) {
			return List.copyOf(transitions);
		}
	}

	/**
	 * A transition as it is recorded and logged, with why the breaker moved, read while its event is
	 * handed to listeners.
	 * @param endpoint the endpoint whose breaker moved
	 * @param event the breaker's event
	 * @param control says why shared state moves a breaker, while it does
	 * @return the transition
	 */
	static Transition transition(LlmEndpoint endpoint, CircuitBreakerOnStateTransitionEvent event,
			BreakerControl control) {
		CircuitBreaker breaker = endpoint.circuitBreaker();
		CircuitBreaker.Metrics metrics = breaker.getMetrics();
		State from = event.getStateTransition().getFromState();
		State to = event.getStateTransition().getToState();
		String fleet = control.moving(breaker);
		String why = reason(from, to, metrics, breaker.getCircuitBreakerConfig(), endpoint.hang().opening(), fleet);
		return new Transition(from, to, event.getCreationTime().toInstant(), metrics.getFailureRate(),
				metrics.getNumberOfBufferedCalls(), why, (fleet != null) ? Transition.FLEET : null);
	}

	private static void record(LlmEndpoint endpoint, Deque<Transition> transitions,
			CircuitBreakerOnStateTransitionEvent event, BreakerControl control) {
		Transition transition = transition(endpoint, event, control);
		String why = transition.reason();
		synchronized (transitions) {
			if (transitions.size() == MAX_TRANSITIONS) {
				transitions.removeFirst();
			}
			Transition last = transitions.peekLast();
			if (last != null && followedBy(transition, last, beforeLast(transitions))) {
				// the next transition's event came first (the probes closed the breaker on another
				// thread before this one's event reached every listener): shown in the order they were made
				transitions.removeLast();
				transitions.addLast(transition);
				transitions.addLast(last);
			}
			else {
				transitions.addLast(transition);
			}
		}
		boolean opened = transition.to() == State.OPEN && isAutomatic(transition);
		if (opened ? logger.isWarnEnabled() : logger.isInfoEnabled()) {
			String message = "LLM endpoint '" + endpoint.name() + "' (model " + endpoint.settings().upstream().model()
					+ "): circuit breaker " + transition.from() + " -> " + transition.to() + ": " + why;
			if (opened) {
				logger.warn(message);
			}
			else {
				logger.info(message);
			}
		}
	}

	/** Whether {@code last}, recorded already, was made after {@code transition}: it leaves the state this one enters, which the one before it left. */
	private static boolean followedBy(Transition transition, Transition last, @Nullable Transition beforeLast) {
		return beforeLast != null && last.from() == transition.to() && beforeLast.to() == transition.from();
	}

	private static @Nullable Transition beforeLast(Deque<Transition> transitions) {
		Iterator<Transition> newestFirst = transitions.descendingIterator();
		newestFirst.next();
		return newestFirst.hasNext() ? newestFirst.next() : null;
	}

	/**
	 * Why the breaker moved. The metrics are those of the new state: Resilience4j hands the window
	 * that tripped it to the open state, but starts closed and half-open with an empty one.
	 */
	static String reason(Transition transition, CircuitBreaker.Metrics metrics, CircuitBreakerConfig config) {
		return reason(transition.from(), transition.to(), metrics, config, null, null);
	}

	/**
	 * Why the breaker moved, when it may have been opened for a hang, or moved by the fleet.
	 * @param hang why the endpoint's hang detector is opening it, or {@code null} when it is not
	 * @param fleet why shared state is moving it, or {@code null} when it is not
	 */
	static String reason(State from, State to, CircuitBreaker.Metrics metrics, CircuitBreakerConfig config,
			@Nullable String hang, @Nullable String fleet) {
		Transition transition = new Transition(from, to, Instant.EPOCH, metrics.getFailureRate(),
				metrics.getNumberOfBufferedCalls(), "", null);
		String probes = config.getPermittedNumberOfCallsInHalfOpenState() + " probe calls";
		String wait = duration(Duration.ofMillis(config.getWaitIntervalFunctionInOpenState().apply(1)));
		if (fleet != null) {
			return (transition.to() == State.OPEN) ? fleet + "; calls go to the next endpoint of their route" : fleet;
		}
		if (hang != null && transition.from() == State.CLOSED && transition.to() == State.OPEN) {
			return hang + "; calls go to the next endpoint of their route, probes after " + wait;
		}
		if (!isAutomatic(transition)) {
			return "set by hand (the actuator's POST /actuator/llmbreakers/{name}, or code)";
		}
		if (transition.from() == State.OPEN) {
			return wait + " passed, " + probes + " let through";
		}
		if (transition.to() == State.CLOSED) {
			return "the " + probes + " stayed under the failure-rate threshold of " + percent(config.getFailureRateThreshold())
					+ "; a new window of " + config.getSlidingWindowSize() + " calls starts";
		}
		String over = (transition.from() == State.HALF_OPEN) ? "over the " + metrics.getNumberOfBufferedCalls() + " probe calls"
				: "over the " + metrics.getNumberOfBufferedCalls() + " calls in its window of " + config.getSlidingWindowSize();
		String cause = (metrics.getFailureRate() >= config.getFailureRateThreshold())
				? "failure rate " + percent(metrics.getFailureRate()) + " " + over + " (threshold "
						+ percent(config.getFailureRateThreshold()) + ")"
				: "slow-call rate " + percent(metrics.getSlowCallRate()) + " (calls over "
						+ duration(config.getSlowCallDurationThreshold()) + ") " + over + " (threshold "
						+ percent(config.getSlowCallRateThreshold()) + ")";
		return cause + "; calls go to the next endpoint of their route, probes after " + wait;
	}

	// Resilience4j moves by itself only along CLOSED -> OPEN -> HALF_OPEN -> CLOSED or OPEN; every
	// other move (forced open, disabled, closed or reset from open) was asked for.
	private static boolean isAutomatic(Transition transition) {
		return switch (transition.from()) {
			case CLOSED -> transition.to() == State.OPEN;
			case OPEN -> transition.to() == State.HALF_OPEN;
			case HALF_OPEN -> transition.to() == State.OPEN || transition.to() == State.CLOSED;
			default -> false;
		};
	}

	private static String percent(float rate) {
		return String.format(Locale.ROOT, "%.1f %%", rate);
	}

	private static String duration(Duration duration) {
		long millis = duration.toMillis();
		return (millis % 1000 == 0) ? (millis / 1000) + "s" : millis + "ms";
	}

	/**
	 * A state transition of a breaker.
	 *
	 * @param from the state before
	 * @param to the state after
	 * @param at when it happened
	 * @param failureRate the failure rate, in percent, of the window when it happened (-1 when the new
	 * state starts an empty window)
	 * @param bufferedCalls the calls in the window when it happened
	 * @param reason why it happened, as the transition's log line says it
	 * @param source {@link #FLEET} when shared state moved it (the reason says which replica, when
	 * known), {@code null} when this instance's own breaker, probes or an operator here did
	 */
	public record Transition(State from, State to, Instant at, float failureRate, int bufferedCalls, String reason,
			@Nullable String source) {

		/** The {@link #source} of a transition shared state made. */
		public static final String FLEET = "fleet";

	}

}
