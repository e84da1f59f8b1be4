package dev.llmresilience.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.failure.LlmUnavailableException;
import dev.llmresilience.gateway.LlmGatewayListener;
import dev.llmresilience.spi.BreakerControl;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreaker.State;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent;
import org.jspecify.annotations.Nullable;

/**
 * Each endpoint's last {@value #MINUTES} minutes, for the dashboard: how long its breaker spent in
 * each state and how the calls that tried it first were answered (by tier), in buckets of
 * {@value #BUCKET_SECONDS} seconds; and its current or last outage, from the transition out of
 * {@code CLOSED} that began it, with the probe cycles since. A gateway listener, so it sees what
 * callers got.
 * <p>
 * Bounded: per endpoint a ring of {@value #BUCKETS} buckets of {@code long} counters, one per
 * breaker state and one per tier (11 a bucket, about 12 KiB an endpoint with the arrays'
 * headers), allocated once, and one outage; nothing grows with traffic or time. Time is the
 * injected clock's.
 */
final class EndpointHistory implements LlmGatewayListener {

	/** The length of one bucket. */
	static final int BUCKET_SECONDS = 10;

	/** How long the history reaches back. */
	static final int MINUTES = 15;

	/** Buckets per endpoint. */
	static final int BUCKETS = MINUTES * 60 / BUCKET_SECONDS;

	private static final long BUCKET_MILLIS = BUCKET_SECONDS * 1000L;

	private static final State[] STATES = State.values();

	private static final Tier[] TIERS = Tier.values();

	private final Clock clock;

	private final EndpointRegistry endpoints;

	private final Map<String, Track> tracks = new LinkedHashMap<>();

	/**
	 * Start the history of every endpoint of the registry now.
	 * @param endpoints the endpoints, whose breakers it listens to
	 * @param clock the clock the buckets are counted on
	 */
	EndpointHistory(EndpointRegistry endpoints, Clock clock) {
		this(endpoints, BreakerControl.LOCAL, clock);
	}

	/**
	 * Start the history of every endpoint of the registry now, whose breakers shared state may move.
	 * @param endpoints the endpoints, whose breakers it listens to
	 * @param control says why shared state moves a breaker, while it does
	 * @param clock the clock the buckets are counted on
	 */
	EndpointHistory(EndpointRegistry endpoints, BreakerControl control, Clock clock) {
		this.clock = clock;
		this.endpoints = endpoints;
		for (LlmEndpoint endpoint : endpoints.endpoints()) {
			CircuitBreaker breaker = endpoint.circuitBreaker();
			Track track = new Track(breaker, clock.millis());
			this.tracks.put(endpoint.name(), track);
			breaker.getEventPublisher()
				.onStateTransition((event) -> track.moved(event, BreakerTransitions.transition(endpoint, event, control),
						this.clock.millis()));
		}
	}

	@Override
	public void onResponse(String route, ChatResponse response) {
		count(firstTried(route, response.attempts(), response.endpoint()), response.tier());
	}

	@Override
	public void onError(String route, Throwable error) {
		if (error instanceof LlmUnavailableException unavailable) {
			count(firstTried(route, unavailable.attempts(), null), Tier.BUSY);
		}
	}

	/**
	 * One endpoint's history, up to now.
	 * @param endpoint the endpoint's name
	 * @return its history, or {@code null} for an unknown endpoint
	 */
	@Nullable Timeline timeline(String endpoint) {
		Track track = this.tracks.get(endpoint);
		return (track != null) ? track.timeline(this.clock.millis()) : null;
	}

	// The endpoint a call tried first: its first attempt's (refused ones included), else the one that
	// answered, else the route's first
	private @Nullable String firstTried(String route, List<Attempt> attempts, @Nullable String answered) {
		if (!attempts.isEmpty()) {
			return attempts.get(0).endpoint();
		}
		if (answered != null) {
			return answered;
		}
		List<LlmEndpoint> members = this.endpoints.route(route);
		return (members != null && !members.isEmpty()) ? members.get(0).name() : null;
	}

	private void count(@Nullable String endpoint, Tier tier) {
		Track track = (endpoint != null) ? this.tracks.get(endpoint) : null;
		if (track != null) {
			track.answered(tier, this.clock.millis());
		}
	}

	/**
	 * An endpoint's last {@value #MINUTES} minutes.
	 *
	 * @param start the start of the oldest bucket
	 * @param now the time it was read at, in the newest bucket
	 * @param states milliseconds in each breaker state, per bucket, oldest first ({@value #BUCKETS}
	 * each); only the states the breaker was in
	 * @param answers the calls that tried this endpoint first, by tier, per bucket, oldest first; only
	 * the tiers there were
	 * @param outage the current or last outage, or {@code null} if the breaker never left CLOSED
	 */
	record Timeline(Instant start, Instant now, Map<String, long[]> states, Map<String, long[]> answers,
			@Nullable Outage outage) {
	}

	/**
	 * An outage: from the breaker's move out of CLOSED to its move back.
	 *
	 * @param began the transition out of CLOSED
	 * @param probes the probe cycles since (moves from OPEN to HALF_OPEN)
	 * @param firstProbe when the first began, or {@code null}
	 * @param lastProbe when the last began, or {@code null}
	 * @param ended when the breaker closed again, or {@code null} while the outage lasts
	 */
	record Outage(BreakerTransitions.Transition began, int probes, @Nullable Instant firstProbe,
			@Nullable Instant lastProbe, @Nullable Instant ended) {
	}

	/** One endpoint's buckets, ring-indexed by bucket number; guarded by itself. */
	private static final class Track {

		private final CircuitBreaker breaker;

		private final long[] bucketOf = new long[BUCKETS];

		private final long[][] stateMillis = new long[BUCKETS][STATES.length];

		private final long[][] tiers = new long[BUCKETS][TIERS.length];

		private State state;

		private long since;

		private @Nullable Outage outage;

		Track(CircuitBreaker breaker, long now) {
			this.breaker = breaker;
			this.state = breaker.getState();
			this.since = now;
			Arrays.fill(this.bucketOf, Long.MIN_VALUE);
		}

		synchronized void moved(CircuitBreakerOnStateTransitionEvent event, BreakerTransitions.Transition transition,
				long now) {
			credit(now);
			// the breaker's state now, not the event's: two events of one breaker may reach listeners
			// in the other order
			this.state = this.breaker.getState();
			State from = event.getStateTransition().getFromState();
			State to = event.getStateTransition().getToState();
			Instant at = event.getCreationTime().toInstant();
			Outage last = this.outage;
			if (from == State.CLOSED && to != State.CLOSED) {
				this.outage = new Outage(transition, 0, null, null, null);
			}
			else if (last != null && last.ended() == null && !at.isBefore(last.began().at())) {
				if (to == State.CLOSED) {
					this.outage = new Outage(last.began(), last.probes(), last.firstProbe(), last.lastProbe(), at);
				}
				else if (from == State.OPEN && to == State.HALF_OPEN) {
					this.outage = new Outage(last.began(), last.probes() + 1,
							(last.firstProbe() != null) ? last.firstProbe() : at, at, null);
				}
			}
		}

		synchronized void answered(Tier tier, long now) {
			long bucket = Math.floorDiv(now, BUCKET_MILLIS);
			if (bucket >= this.bucketOf[(int) Math.floorMod(bucket, (long) BUCKETS)]) {
				// (an answer counted a whole window late would empty a newer bucket: it is left out)
				this.tiers[slot(bucket)][tier.ordinal()]++;
			}
		}

		synchronized Timeline timeline(long now) {
			credit(now);
			long newest = Math.floorDiv(now, BUCKET_MILLIS);
			long oldest = newest - BUCKETS + 1;
			Map<String, long[]> states = series(STATES, this.stateMillis, oldest);
			Map<String, long[]> answers = series(TIERS, this.tiers, oldest);
			return new Timeline(Instant.ofEpochMilli(oldest * BUCKET_MILLIS), Instant.ofEpochMilli(now), states, answers,
					this.outage);
		}

		// each named counter over the window, oldest bucket first; those that are zero throughout left out
		private Map<String, long[]> series(Enum<?>[] names, long[][] counters, long oldest) {
			Map<String, long[]> series = new LinkedHashMap<>();
			for (Enum<?> name : names) {
				long[] values = new long[BUCKETS];
				boolean any = false;
				for (int i = 0; i < BUCKETS; i++) {
					long bucket = oldest + i;
					int slot = (int) Math.floorMod(bucket, (long) BUCKETS);
					values[i] = (this.bucketOf[slot] == bucket) ? counters[slot][name.ordinal()] : 0;
					any |= values[i] != 0;
				}
				if (any) {
					series.put(name.name(), values);
				}
			}
			return series;
		}

		// the time in the current state up to now, spread over the buckets it covers (at most the window)
		private void credit(long now) {
			long from = Math.max(this.since, (Math.floorDiv(now, BUCKET_MILLIS) - BUCKETS + 1) * BUCKET_MILLIS);
			while (from < now) {
				long bucket = Math.floorDiv(from, BUCKET_MILLIS);
				long end = Math.min(now, (bucket + 1) * BUCKET_MILLIS);
				this.stateMillis[slot(bucket)][this.state.ordinal()] += end - from;
				from = end;
			}
			this.since = Math.max(this.since, now);
		}

		// the ring's slot of a bucket, emptied first if it held an older one
		private int slot(long bucket) {
			int slot = (int) Math.floorMod(bucket, (long) BUCKETS);
			if (this.bucketOf[slot] != bucket) {
				this.bucketOf[slot] = bucket;
				Arrays.fill(this.stateMillis[slot], 0);
				Arrays.fill(this.tiers[slot], 0);
			}
			return slot;
		}

	}

}
