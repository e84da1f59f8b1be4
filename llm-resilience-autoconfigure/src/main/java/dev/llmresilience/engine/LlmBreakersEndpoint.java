package dev.llmresilience.engine;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
import dev.llmresilience.spi.BreakerControl;
import dev.llmresilience.spi.BreakerControl.ManualState;
import dev.llmresilience.spi.SharedState;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * {@code /actuator/llmbreakers}: the state of every endpoint's circuit breaker and bulkhead, the
 * routes and how each is balanced, the deferred queue, the guards and the shared state; a write
 * operation moves a breaker by hand (on every replica, when the state is shared). Shows no API key
 * and no header value.
 * <p>
 * Read-only by default, as Boot's own endpoints that change state are: whoever can reach the write
 * operation can take every provider out of traffic ({@code FORCED_OPEN}) or stop a breaker from
 * ever opening ({@code DISABLED}), on every replica when the state is shared. Allow it with
 * {@code management.endpoint.llmbreakers.access=unrestricted}, behind Spring Security.
 */
@Endpoint(id = "llmbreakers", defaultAccess = Access.READ_ONLY)
public class LlmBreakersEndpoint {

	private static final List<String> STATES = Arrays.stream(ManualState.values()).map(Enum::name).toList();

	private final EndpointRegistry endpoints;

	private final EndpointDescriptions descriptions;

	private final @Nullable DegradationWatch degradation;

	private final @Nullable DeferredQueue deferred;

	private final CallVolumeGuard guard;

	private final BudgetGuard budget;

	private final RouteBalancer balancer;

	private final ConcurrencyLimit limit;

	private final Hedging hedging;

	private final BreakerControl control;

	private final SharedState shared;

	/**
	 * Create the endpoint with no deferred queue, the guards off and every route in its order.
	 * @param endpoints the endpoints to report on
	 * @param transitions the breakers' recent transitions
	 */
	public LlmBreakersEndpoint(EndpointRegistry endpoints, BreakerTransitions transitions) {
		this(endpoints, transitions, new EndpointHistory(endpoints, Clock.systemUTC()), null, null, CallVolumeGuard.off(),
				BudgetGuard.off(Clock.systemUTC()), RouteBalancer.priority(endpoints), ConcurrencyLimit.off(), Hedging.off(),
				BreakerControl.LOCAL, SharedState.LOCAL);
	}

	/**
	 * Create the endpoint.
	 * @param endpoints the endpoints to report on
	 * @param transitions the breakers' recent transitions
	 * @param history each endpoint's last 15 minutes and its current or last outage
	 * @param degradation the routes' degradation watch, or {@code null}
	 * @param deferred the deferred queue, or {@code null} when deferral is off
	 * @param guard the call-volume guard
	 * @param budget the daily budget
	 * @param balancer the routes' balancer
	 * @param limit the limit on gateway calls in flight
	 * @param hedging which routes hedge, and what their hedges came to
	 * @param control moves a breaker by hand (on every replica, when shared)
	 * @param shared the shared state
	 */
	public LlmBreakersEndpoint(EndpointRegistry endpoints, BreakerTransitions transitions, EndpointHistory history,
			@Nullable DegradationWatch degradation, @Nullable DeferredQueue deferred, CallVolumeGuard guard,
			BudgetGuard budget, RouteBalancer balancer, ConcurrencyLimit limit, Hedging hedging,
			BreakerControl control, SharedState shared) {
		this.endpoints = endpoints;
		this.descriptions = new EndpointDescriptions(transitions, history);
		this.degradation = degradation;
		this.deferred = deferred;
		this.guard = guard;
		this.budget = budget;
		this.balancer = balancer;
		this.limit = limit;
		this.hedging = hedging;
		this.control = control;
		this.shared = shared;
	}

	/**
	 * Every endpoint and route.
	 * @return the report
	 */
	@ReadOperation
	public BreakersDescriptor breakers() {
		Map<String, EndpointDescriptor> descriptors = new LinkedHashMap<>();
		this.endpoints.endpoints().forEach((endpoint) -> descriptors.put(endpoint.name(), this.descriptions.describe(endpoint)));
		return new BreakersDescriptor(descriptors, this.endpoints.routeNames(),
				new DeferredDescriptor((this.deferred != null) ? this.deferred.pending() : 0,
						(this.deferred != null) ? this.deferred.capacity() : 0,
						(this.deferred != null) ? this.deferred.notDurable() : 0),
				new GuardDescriptor(this.guard.maxCalls(), this.guard.callsThisWindow(), this.guard.isTripped()),
				new BudgetDescriptor(this.budget.maxCostPerDay(), this.budget.spentToday(), this.budget.isTripped()),
				RouteDegradationDescriptor.of(this.degradation), RouteBalanceDescriptor.of(this.balancer.report()),
				ConcurrencyDescriptor.of(this.limit), HedgeDescriptor.of(this.hedging, this.endpoints), this.shared.status());
	}

	/**
	 * One endpoint.
	 * @param name the endpoint's name
	 * @return its descriptor, or {@code null} (a 404) for an unknown name
	 */
	@ReadOperation
	public @Nullable EndpointDescriptor breaker(@Selector String name) {
		LlmEndpoint endpoint = this.endpoints.endpoint(name);
		return (endpoint != null) ? this.descriptions.describe(endpoint) : null;
	}

	/**
	 * Move one endpoint's breaker to a state: {@code FORCED_OPEN} (no calls until changed back),
	 * {@code CLOSED}, {@code DISABLED} (always lets calls through, records nothing) or {@code RESET}
	 * (closed, with an empty window). With shared state, every replica's breaker moves.
	 * @param name the endpoint's name
	 * @param state the target state
	 * @return the endpoint's new descriptor, or {@code null} (a 404) for an unknown name
	 */
	@WriteOperation
	public @Nullable EndpointDescriptor transition(@Selector String name, String state) {
		LlmEndpoint endpoint = this.endpoints.endpoint(name);
		if (endpoint == null) {
			return null;
		}
		ManualState target = ManualState.parse(state);
		if (target == null) {
			String message = "Unknown state '" + state + "': use one of " + String.join(", ", STATES);
			throw new InvalidEndpointRequestException(message, message);
		}
		this.control.transition(endpoint.circuitBreaker(), target);
		return this.descriptions.describe(endpoint);
	}

	/**
	 * The whole report.
	 *
	 * @param endpoints every endpoint by name
	 * @param routes every route's endpoints, in order
	 * @param deferred the deferred queue
	 * @param guard the call-volume guard
	 * @param budget the daily budget
	 * @param degradation each route's share of degraded answers and its current run of them
	 * @param balancing every route's strategy and the share each endpoint received
	 * @param concurrency the limit on gateway calls in flight
	 * @param hedging every route that hedges its requests, by route
	 * @param sharedState whether the figures are the fleet's (shared on Redis) or this instance's
	 */
	public record BreakersDescriptor(Map<String, EndpointDescriptor> endpoints, Map<String, List<String>> routes,
			DeferredDescriptor deferred, GuardDescriptor guard, BudgetDescriptor budget,
			Map<String, RouteDegradationDescriptor> degradation, Map<String, RouteBalanceDescriptor> balancing,
			ConcurrencyDescriptor concurrency, Map<String, HedgeDescriptor> hedging,
			SharedState.Status sharedState) {
	}

	/**
	 * The deferred queue.
	 *
	 * @param pending requests waiting
	 * @param capacity requests held at most (0 when deferral is off)
	 * @param notDurable pending requests held by this instance only, not stored where they outlive it
	 * (every pending one with the in-memory store; with Redis, those taken while it was unreachable)
	 */
	public record DeferredDescriptor(int pending, int capacity, int notDurable) {
	}

	/**
	 * The call-volume guard.
	 *
	 * @param maxCallsPerHour the limit, 0 when off
	 * @param callsThisHour upstream attempts in the current (fixed) window
	 * @param tripped whether attempts are being refused
	 */
	public record GuardDescriptor(int maxCallsPerHour, int callsThisHour, boolean tripped) {
	}

	/**
	 * The daily budget.
	 *
	 * @param maxCostPerDay the cap, 0 when off
	 * @param spentToday what today's answers cost
	 * @param tripped whether the day's budget is spent
	 */
	public record BudgetDescriptor(BigDecimal maxCostPerDay, BigDecimal spentToday, boolean tripped) {
	}

	/**
	 * One endpoint. Its settings, breaker and past are unwrapped: their fields are the endpoint's own
	 * in the JSON ({@code model}, ..., {@code state}, ..., {@code notPermittedCalls}, then
	 * {@code config}, {@code bulkhead}, {@code lastTransition}, {@code transitions}, {@code history}).
	 *
	 * @param settings what the endpoint is in routes
	 * @param breaker the breaker's state and window now
	 * @param config the breaker's configuration
	 * @param bulkhead the bulkhead
	 * @param past what the breaker did: its transitions and last 15 minutes (unwrapped)
	 * @param probes the breaker's half-open probes
	 * @param firstToken the recent times to first token
	 * @param hang the evidence of a hang: the calls waiting for their first token and the threshold
	 * @param capacity the provider's known rate limits and the retry budget
	 */
	public record EndpointDescriptor(@JsonUnwrapped SettingsDescriptor settings, @JsonUnwrapped BreakerDescriptor breaker,
			ConfigDescriptor config, BulkheadDescriptor bulkhead, @JsonUnwrapped PastDescriptor past,
			ProbeDescriptor probes, FirstTokenDescriptor firstToken, HangDescriptor hang, CapacityDescriptor capacity) {
	}

	/**
	 * What an endpoint's breaker did, unwrapped in its JSON ({@code lastTransition},
	 * {@code transitions}, {@code history}).
	 *
	 * @param lastTransition the most recent state change, or {@code null}
	 * @param transitions the most recent state changes, oldest first (at most 10)
	 * @param history the last 15 minutes in buckets, and the current or last outage
	 */
	public record PastDescriptor(@Nullable TransitionDescriptor lastTransition, List<TransitionDescriptor> transitions,
			HistoryDescriptor history) {
	}

	/**
	 * An endpoint's last 15 minutes, in buckets of {@code bucketSeconds}, oldest first, the last one
	 * the bucket {@code now} is in; and its current or last outage.
	 *
	 * @param start the start of the oldest bucket, ISO-8601
	 * @param now when this was read, ISO-8601
	 * @param bucketSeconds the length of a bucket
	 * @param states milliseconds the breaker spent in each state, per bucket (only the states it was
	 * in; a bucket before the application started is 0 in every one)
	 * @param answers the gateway calls that tried this endpoint first (their first attempt, refused
	 * ones included), by the tier they were answered with, per bucket (only the tiers there were)
	 * @param outage the current or last outage, or {@code null} if the breaker never left CLOSED
	 */
	public record HistoryDescriptor(String start, String now, int bucketSeconds, Map<String, long[]> states,
			Map<String, long[]> answers, @Nullable OutageDescriptor outage) {
	}

	/**
	 * An outage: from the breaker's move out of CLOSED to its move back.
	 *
	 * @param began the transition out of CLOSED that began it
	 * @param probes the probe cycles since (moves from OPEN to HALF_OPEN)
	 * @param firstProbe when the first began, ISO-8601, or {@code null}
	 * @param lastProbe when the last began, ISO-8601, or {@code null}
	 * @param ended when the breaker closed again, ISO-8601, or {@code null} while it lasts
	 */
	public record OutageDescriptor(TransitionDescriptor began, int probes, @Nullable String firstProbe,
			@Nullable String lastProbe, @Nullable String ended) {
	}

	/**
	 * What an endpoint is in routes.
	 *
	 * @param model the model
	 * @param region the region label
	 * @param priority the priority
	 * @param enabled whether it takes part in routes
	 */
	public record SettingsDescriptor(String model, @Nullable String region, int priority, boolean enabled) {
	}

	/**
	 * A breaker's state and its window now.
	 *
	 * @param state the breaker's state
	 * @param failureRate percent, -1 until the minimum number of calls
	 * @param slowCallRate percent, -1 until the minimum number of calls
	 * @param bufferedCalls calls in the window
	 * @param failedCalls failed calls in the window
	 * @param slowCalls slow calls in the window
	 * @param notPermittedCalls calls refused while open
	 * @param heldCalls calls ended whose outcome the closed breaker holds until the calls started
	 * before them have ended (at most {@code config.startOrderWait}), not yet in the window
	 */
	public record BreakerDescriptor(String state, float failureRate, float slowCallRate, int bufferedCalls,
			int failedCalls, int slowCalls, long notPermittedCalls, int heldCalls) {
	}

	/**
	 * The breaker's half-open probes.
	 *
	 * @param mode {@code SYNTHETIC} (the library sends them) or {@code REQUESTS} (users' calls are them)
	 * @param sent probes the library sent
	 * @param succeeded of those, the successful ones
	 * @param failed of those, the others
	 * @param lastAt when the last one ended, or {@code null}
	 * @param lastOutcome how the last one ended, or {@code null}
	 */
	public record ProbeDescriptor(String mode, long sent, long succeeded, long failed, @Nullable Instant lastAt,
			@Nullable String lastOutcome) {
	}

	/**
	 * The breaker's configuration.
	 *
	 * @param slidingWindowSize calls in the window
	 * @param minimumNumberOfCalls calls before the rate is computed
	 * @param failureRateThreshold percent at which it opens
	 * @param waitDurationInOpenState time open before probing, ISO-8601
	 * @param permittedCallsInHalfOpenState probes
	 * @param startOrderWait how long the closed breaker holds an outcome for the calls started before
	 * it, ISO-8601 ({@code PT0S}: counted as they end)
	 */
	public record ConfigDescriptor(int slidingWindowSize, int minimumNumberOfCalls, float failureRateThreshold,
			Duration waitDurationInOpenState, int permittedCallsInHalfOpenState, Duration startOrderWait) {
	}

	/**
	 * The bulkhead.
	 *
	 * @param maxConcurrentCalls its size
	 * @param availableConcurrentCalls permits free now
	 */
	public record BulkheadDescriptor(int maxConcurrentCalls, int availableConcurrentCalls) {
	}

	/**
	 * A state change.
	 *
	 * @param from the state before
	 * @param to the state after
	 * @param at when, ISO-8601
	 * @param failureRate the window's failure rate then, in percent; -1 when the new state starts an
	 * empty window (to CLOSED, HALF_OPEN, or by hand)
	 * @param bufferedCalls the calls in the window then
	 * @param reason why, as the transition's log line says it (for a move shared state made, which
	 * replica made it, when known)
	 * @param source {@code "fleet"} when shared state moved the breaker, else {@code null}
	 */
	public record TransitionDescriptor(String from, String to, String at, float failureRate, int bufferedCalls,
			String reason, @Nullable String source) {
	}

}
