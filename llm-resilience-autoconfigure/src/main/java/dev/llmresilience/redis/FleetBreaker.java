package dev.llmresilience.redis;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import dev.llmresilience.spi.BreakerControl;
import dev.llmresilience.spi.BreakerControl.ManualState;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * One endpoint's breaker in the fleet. Its recorded outcomes (Resilience4j's success and error
 * events, while CLOSED) are sent in batches to the fleet's window, where {@code breaker-record.lua}
 * decides; an open decided there, or on one replica's evidence of a hang, is applied here at once
 * from the script's reply and on the other replicas from the channel, and one replica probes for all
 * ({@link FleetProbes}). The local breaker goes on deciding on its own window too.
 */
final class FleetBreaker {

	private static final Log logger = LogFactory.getLog(FleetBreaker.class);

	private static final RedisScript<List> RECORD = RedisScripts.load("breaker-record", List.class);

	private static final RedisScript<Long> MANUAL = RedisScripts.load("breaker-manual", Long.class);

	private static final RedisScript<List> EVIDENCE = RedisScripts.load("breaker-evidence", List.class);

	private final RedisFleet fleet;

	/** The endpoint's name, which its breaker carries. */
	private final String name;

	private final CircuitBreaker breaker;

	private final List<String> keys;

	private final FleetProbes probes;

	private final StringBuilder unsentOutcomes = new StringBuilder();

	private boolean sending;

	/**
	 * Moves a state set by hand or a recovery: a record script's reply sent before one (replies and
	 * the channel's messages travel on different connections) must not undo it.
	 */
	private final AtomicLong epoch = new AtomicLong();

	/** A state set by hand that the fleet holds (FORCED_OPEN, DISABLED), as applied here. */
	private volatile @Nullable ManualState held;

	/** A state set by hand here while Redis was unavailable, to be sent when it is back. */
	private volatile @Nullable ManualState unsent;

	FleetBreaker(RedisFleet fleet, CircuitBreaker breaker) {
		this.fleet = fleet;
		this.breaker = breaker;
		this.name = breaker.getName();
		this.keys = List.of(fleet.key("breaker:" + this.name + ":window"),
				fleet.key("breaker:" + this.name + ":state"));
		this.probes = new FleetProbes(fleet, breaker, this.keys);
		this.breaker.getEventPublisher().onSuccess((event) -> record('0')).onError((event) -> record('1'));
	}

	private void record(char outcome) {
		// events come before the breaker takes the outcome in, so this is the state it is recorded in
		if (!this.fleet.isAvailable() || this.breaker.getState() != CircuitBreaker.State.CLOSED) {
			return;
		}
		synchronized (this) {
			this.unsentOutcomes.append(outcome);
			if (this.sending) {
				return;
			}
			this.sending = true;
		}
		send();
	}

	private void send() {
		String outcomes;
		synchronized (this) {
			outcomes = this.unsentOutcomes.toString();
			this.unsentOutcomes.setLength(0);
			if (outcomes.isEmpty()) {
				this.sending = false;
				return;
			}
		}
		CircuitBreakerConfig config = this.breaker.getCircuitBreakerConfig();
		long sentIn = this.epoch.get();
		long recoveries = this.probes.recoveries();
		this.fleet
			.script(RECORD, this.keys, this.fleet.replica(), outcomes, config.getSlidingWindowSize(),
					config.getMinimumNumberOfCalls(), config.getFailureRateThreshold(), this.probes.fleetOpenTime().toMillis(),
					this.fleet.channel(), this.name)
			.subscribe((reply) -> {
				// a reply that left Redis before this replica's probes closed the breaker speaks of the open they ended
				if (this.epoch.get() == sentIn && this.probes.recoveries() == recoveries) {
					applyReply(reply);
				}
				send();
			}, (error) -> {
				synchronized (this) {
					// outcomes from before an outage would be stale when it ends: the fleet's window starts afresh
					this.unsentOutcomes.setLength(0);
					this.sending = false;
				}
			});
	}

	/**
	 * This replica opened the breaker on its own evidence of a hang: the fleet opens it too, on
	 * every replica, with this replica leading its half-open phase, as if its window had opened it
	 * (unless the fleet's breaker is open or held by hand already: then this replica follows).
	 * Nothing is sent while Redis is unavailable: the open stays this replica's own.
	 * @param reason the evidence, as the transition log says it
	 */
	void openedOnEvidence(String reason) {
		if (!this.fleet.isAvailable()) {
			return;
		}
		long sentIn = this.epoch.get();
		long recoveries = this.probes.recoveries();
		this.fleet
			.script(EVIDENCE, this.keys, this.fleet.replica(), reason, this.probes.fleetOpenTime().toMillis(),
					this.fleet.channel(), this.name)
			.subscribe((reply) -> {
				// a reply that left Redis before this replica's probes closed the breaker speaks of the open they ended
				if (this.epoch.get() == sentIn && this.probes.recoveries() == recoveries) {
					applyReply(reply);
				}
			}, (error) -> logger.debug("Could not tell the fleet that '" + this.name + "' opened: " + error));
	}

	/** A breaker script's reply: {@code {decision, by, why}}, the last two when the fleet holds a state. */
	private void applyReply(List<?> reply) {
		FleetDecision decision = FleetDecision.of(String.valueOf(reply.get(0)));
		String by = (decision == FleetDecision.OPENED) ? this.fleet.replica() : part(reply, 1);
		String why = (decision == FleetDecision.COUNTED) ? "" : part(reply, (decision == FleetDecision.OPENED) ? 1 : 2);
		apply(decision, by, why);
	}

	private static String part(List<?> reply, int index) {
		return (reply.size() > index && reply.get(index) != null) ? String.valueOf(reply.get(index)) : "";
	}

	/**
	 * Why the fleet is moving the breaker, while it does.
	 * @return the reason, or {@code null} when the move is not the fleet's
	 */
	@Nullable String moving() {
		String probing = this.probes.moving();
		return (probing != null) ? probing : this.applying.get();
	}

	/** Why the fleet moves the breaker to a state set by hand on another replica, while it does. */
	private final ThreadLocal<@Nullable String> applying = new ThreadLocal<>();

	/**
	 * Apply what the fleet decided (from a script's reply or the channel).
	 * @param decision the decision
	 * @param by the replica that decided it, or empty when unknown
	 * @param why what opened the breaker (for an open), or empty when unknown
	 */
	void apply(FleetDecision decision, String by, String why) {
		try {
			switch (decision) {
				case OPENED -> this.probes.opened(true, by, why);
				case OPEN -> this.probes.opened(by.equals(this.fleet.replica()), by, why);
				case REOPENED -> this.probes.reopened(by);
				case RECOVERED -> {
					this.epoch.incrementAndGet();
					this.probes.recovered(by);
				}
				case FORCED_OPEN, DISABLED, CLOSED, RESET -> {
					this.epoch.incrementAndGet();
					ManualState manual = decision.manual();
					this.held = holds(manual) ? manual : null;
					if (!matches(this.breaker.getState(), manual)) {
						this.applying.set("set to " + manual + " by hand on "
								+ (by.isEmpty() ? "another replica" : "replica " + by) + ", for the fleet");
						try {
							BreakerControl.apply(this.breaker, manual);
						}
						finally {
							this.applying.remove();
						}
					}
				}
				case COUNTED -> {
					// the record script decided nothing
				}
			}
		}
		catch (RuntimeException ex) {
			logger.debug("Could not apply the fleet's " + decision + " to '" + this.name + "': " + ex);
		}
	}

	/**
	 * Move the breaker by hand, here at once and on every replica through Redis (when Redis is
	 * back, if it is unavailable now).
	 * @param state the state
	 */
	void transition(ManualState state) {
		this.epoch.incrementAndGet();
		BreakerControl.apply(this.breaker, state);
		this.held = holds(state) ? state : null;
		send(state);
	}

	private void send(ManualState state) {
		push(state).subscribe(null, (error) -> { });
	}

	private Mono<?> push(ManualState state) {
		if (!this.fleet.isAvailable()) {
			this.unsent = state;
			return Mono.empty();
		}
		this.unsent = null;
		return this.fleet
			.script(MANUAL, this.keys, state.name(), this.fleet.replica(), this.fleet.channel(), this.name)
			.doOnError((error) -> this.unsent = state);
	}

	/**
	 * Sharing starts or resumes: a state set by hand here meanwhile wins (it is the latest); else
	 * the fleet's state is applied (a CLOSED mark closes what was held by hand or opened by the
	 * fleet), and a held state that Redis lost (restarted without its data) is sent again. A fleet's
	 * OPEN that has expired meanwhile leaves the breaker to its own half-open phase.
	 * @return done when reconciled
	 */
	Mono<?> reconcile() {
		ManualState mine = this.unsent;
		if (mine != null) {
			return push(mine);
		}
		// a state read before a decision heard on the channel meanwhile (the channel is another
		// connection: its message may come first), or before this replica's probes closed the
		// breaker, is stale, as a script's reply would be
		long readIn = this.epoch.get();
		long recoveries = this.probes.recoveries();
		return this.fleet
			.command(() -> this.fleet.redis().<String, String>opsForHash().multiGet(this.keys.get(1), List.of("state", "by", "why")))
			.flatMap((fields) -> {
				if (this.epoch.get() != readIn || this.probes.recoveries() != recoveries) {
					return Mono.empty();
				}
				String state = (fields.get(0) != null) ? fields.get(0) : "";
				String by = (fields.get(1) != null) ? fields.get(1) : "";
				String why = (fields.get(2) != null) ? fields.get(2) : "";
				ManualState kept = this.held;
				if (state.isEmpty()) {
					return (kept != null) ? push(kept) : Mono.empty();
				}
				FleetDecision decision = FleetDecision.of(state);
				if (decision == FleetDecision.OPEN) {
					apply(FleetDecision.OPEN, by, why);
				}
				else if (decision != FleetDecision.CLOSED || kept != null || this.probes.isFleetOpen()) {
					// a CLOSED mark: closed by hand while this replica was away, from a state set by hand or the fleet's open
					apply(decision, by, "");
				}
				return Mono.empty();
			});
	}

	/**
	 * Whether this replica's breaker is in a state the fleet gave it (a state set by hand, or the
	 * fleet's open), which a missed message could leave stale.
	 * @return true if its state follows the fleet's
	 */
	boolean followsTheFleet() {
		return this.held != null || this.probes.isFleetOpen();
	}

	private static boolean holds(ManualState state) {
		return state == ManualState.FORCED_OPEN || state == ManualState.DISABLED;
	}

	private static boolean matches(CircuitBreaker.State now, ManualState state) {
		return switch (state) {
			case FORCED_OPEN -> now == CircuitBreaker.State.FORCED_OPEN;
			case DISABLED -> now == CircuitBreaker.State.DISABLED;
			case CLOSED -> now == CircuitBreaker.State.CLOSED;
			case RESET -> false;
		};
	}

}
