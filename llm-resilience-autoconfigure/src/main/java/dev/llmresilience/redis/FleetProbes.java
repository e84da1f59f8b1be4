package dev.llmresilience.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The fleet probes a failed provider once, not once per replica. When the fleet opens an
 * endpoint's breaker, the replica whose outcomes opened it leads: it runs its half-open phase after
 * {@code wait-duration-in-open-state} as it would alone (the library's synthetic probes, or users'
 * calls as probes); the others follow: a follower's breaker that turns HALF_OPEN while the leader
 * has been heard from within two waits goes straight back to OPEN, before a probe leaves. When
 * the leader's probes succeed it says RECOVERED and every follower closes; when they fail it says
 * REOPENED and the followers stay open. A follower that has not heard from the leader for two waits
 * (the leader is gone) probes itself, and leads from then on; two replicas that probe at once settle
 * on the one whose name sorts first. A breaker that opened on its own window (this replica's own
 * fault) is not the fleet's: its half-open phase stays its own.
 */
final class FleetProbes {

	private static final Log logger = LogFactory.getLog(FleetProbes.class);

	private static final RedisScript<Long> PROBED = RedisScripts.load("breaker-probed", Long.class);

	private final RedisFleet fleet;

	/** The endpoint's name, which its breaker carries. */
	private final String name;

	private final CircuitBreaker breaker;

	private final List<String> keys;

	private final Duration wait;

	/** Whether the breaker is open because the fleet's is (as leader or follower). */
	private volatile boolean fleetOpen;

	/** Whether this replica runs the fleet's half-open phase. */
	private volatile boolean leading;

	/** When the leader was last heard from ({@link System#nanoTime()}). */
	private volatile long leaderHeard;

	/** The replica that runs the fleet's half-open phase, as last heard. */
	private volatile String leader = "";

	/**
	 * Why this class moves the breaker, set while it does: its own transitions are not taken for the
	 * breaker's, and the transition log says why the fleet moved it.
	 */
	private final ThreadLocal<@Nullable String> moving = new ThreadLocal<>();

	/**
	 * Why a follower's breaker turns HALF_OPEN and stays open, set while that transition is being
	 * told to the listeners (on the thread that makes it), so that its log says so.
	 */
	private final ThreadLocal<@Nullable String> following = new ThreadLocal<>();

	/**
	 * Whether {@link #last} listens: registered when the fleet first opens the breaker, so after
	 * every listener the application registered at start-up (the transition log among them).
	 */
	private final AtomicBoolean listensLast = new AtomicBoolean();

	private final AtomicLong recoveries = new AtomicLong();

	FleetProbes(RedisFleet fleet, CircuitBreaker breaker, List<String> keys) {
		this.fleet = fleet;
		this.breaker = breaker;
		this.name = breaker.getName();
		this.keys = keys;
		// the starter's breakers wait a fixed time in the open state: any attempt number gives it
		this.wait = Duration.ofMillis(breaker.getCircuitBreakerConfig().getWaitIntervalFunctionInOpenState().apply(1));
		// onEvent consumers are called before the type-specific ones, the library's probes among them
		this.breaker.getEventPublisher().onEvent((event) -> {
			if (event instanceof CircuitBreakerOnStateTransitionEvent transition) {
				transitioned(transition);
			}
		});
	}

	/**
	 * Whether the breaker is open because the fleet's is.
	 * @return true while this replica leads or follows the fleet's open
	 */
	boolean isFleetOpen() {
		return this.fleetOpen;
	}

	/** How long the fleet's OPEN lasts in Redis, for replicas that join: two waits. */
	Duration fleetOpenTime() {
		return this.wait.multipliedBy(2);
	}

	/**
	 * The fleet opened the breaker.
	 * @param leader whether this replica opened it (its outcomes or its evidence: it then runs the
	 * half-open phase)
	 * @param by the replica that opened it, or empty when unknown
	 * @param why what opened it (the fleet's window, a replica's evidence of a hang), or empty when unknown
	 */
	void opened(boolean leader, String by, String why) {
		CircuitBreaker.State now = this.breaker.getState();
		if (now != CircuitBreaker.State.CLOSED && now != CircuitBreaker.State.OPEN && now != CircuitBreaker.State.HALF_OPEN) {
			return; // forced or disabled by hand
		}
		if (leader && this.fleetOpen && this.leading && now == CircuitBreaker.State.HALF_OPEN) {
			return; // the fleet's open heard again (a heartbeat's check) while this replica probes for it: its probes go on
		}
		if (this.listensLast.compareAndSet(false, true)) {
			this.breaker.getEventPublisher().onStateTransition(this::last);
		}
		String prober = leader ? "this replica" : by.isEmpty() ? "another replica" : "replica " + by;
		if (!this.fleetOpen || now == CircuitBreaker.State.CLOSED) {
			logger.info("LLM endpoint '" + this.name + "': the fleet opens its breaker"
					+ (why.isEmpty() ? "" : " (" + why + ")") + "; " + prober + " probes it");
		}
		this.fleetOpen = true;
		this.leading = leader;
		this.leader = leader ? this.fleet.replica() : by;
		this.leaderHeard = System.nanoTime();
		if (now != CircuitBreaker.State.OPEN) {
			String because = (by.isEmpty() ? "opened by the fleet" : "opened by replica " + by)
					+ (why.isEmpty() ? "" : ": " + why) + "; " + prober + " probes it for the fleet";
			move(this.breaker::transitionToOpenState, because);
		}
	}

	/**
	 * The leader's probes failed.
	 * @param leader the replica that probed
	 */
	void reopened(String leader) {
		if (!this.fleetOpen) {
			return;
		}
		boolean probing = this.breaker.getState() == CircuitBreaker.State.HALF_OPEN;
		if (probing && this.leading && leader.compareTo(this.fleet.replica()) > 0) {
			return; // both probed at once: this replica's name sorts first, it leads
		}
		this.leading = false;
		this.leader = leader;
		this.leaderHeard = System.nanoTime();
		if (probing) {
			move(this.breaker::transitionToOpenState, "the probes of replica " + leader + " failed");
		}
	}

	/**
	 * The leader's probes succeeded: the provider answers again.
	 * @param by the replica that probed, or empty when unknown
	 */
	void recovered(String by) {
		CircuitBreaker.State now = this.breaker.getState();
		if (this.fleetOpen && (now == CircuitBreaker.State.OPEN || now == CircuitBreaker.State.HALF_OPEN)) {
			logger.info("LLM endpoint '" + this.name + "': the fleet's probes succeeded; closing its breaker");
			move(this.breaker::transitionToClosedState,
					"the probes of " + (by.isEmpty() ? "the fleet" : "replica " + by) + " succeeded; a new window starts");
		}
		this.fleetOpen = false;
		this.leading = false;
	}

	/**
	 * The leader probes: this follower's half-open phase (begun by the library's prober or a user's
	 * call) is ended before a probe leaves. Its permits are taken here, before any other listener of
	 * the transition hears of it, so that none is left for a probe; the breaker goes back to OPEN
	 * once the transition has been told to all (a transition made while it is being told would reach
	 * the other listeners before it).
	 */
	private void stayOpen() {
		int permits = this.breaker.getCircuitBreakerConfig().getPermittedNumberOfCallsInHalfOpenState();
		for (int i = 0; i < permits && this.breaker.tryAcquirePermission(); i++) {
			// taken, never given back: the half-open state they belong to ends now
		}
		this.following.set("replica " + this.leader + " probes it for the fleet; this replica sends no probe and goes "
				+ "back to OPEN");
	}

	/**
	 * The last listener of the breaker's transitions: a follower's HALF_OPEN goes back to OPEN here,
	 * once every other listener has been told of it, so that the two reach them (the transition log,
	 * the recent transitions) in the order they were made.
	 */
	private void last(CircuitBreakerOnStateTransitionEvent event) {
		if (this.following.get() == null) {
			return;
		}
		this.following.remove();
		if (this.breaker.getState() == CircuitBreaker.State.HALF_OPEN) {
			move(this.breaker::transitionToOpenState, "replica " + this.leader + " probes it for the fleet");
		}
	}

	private void move(Runnable transition, String because) {
		this.moving.set(because);
		try {
			transition.run();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not move the breaker of '" + this.name + "': " + ex);
		}
		finally {
			this.moving.remove();
		}
	}

	/**
	 * Why this class is moving the breaker, while it does.
	 * @return the reason, or {@code null} on another thread or when it is not moving it
	 */
	@Nullable String moving() {
		String moving = this.moving.get();
		return (moving != null) ? moving : this.following.get();
	}

	private void transitioned(CircuitBreakerOnStateTransitionEvent event) {
		if (this.moving.get() != null) {
			return;
		}
		CircuitBreaker.State from = event.getStateTransition().getFromState();
		CircuitBreaker.State to = event.getStateTransition().getToState();
		if (from == CircuitBreaker.State.CLOSED && to == CircuitBreaker.State.OPEN) {
			this.fleetOpen = false; // its own window opened it: this replica's own fault, or so far only its own
		}
		else if (this.fleetOpen && to == CircuitBreaker.State.HALF_OPEN && !this.leading) {
			if (System.nanoTime() - this.leaderHeard < fleetOpenTime().toNanos()) {
				stayOpen();
			}
			else {
				this.leading = true; // the leader has gone quiet: this replica probes, and leads
			}
		}
		else if (this.fleetOpen && this.leading && from == CircuitBreaker.State.HALF_OPEN && to == CircuitBreaker.State.OPEN) {
			tell(FleetDecision.REOPENED);
		}
		else if (this.fleetOpen && this.leading && from == CircuitBreaker.State.HALF_OPEN && to == CircuitBreaker.State.CLOSED) {
			this.fleetOpen = false;
			this.leading = false;
			tell(FleetDecision.RECOVERED);
		}
		else if (to != CircuitBreaker.State.OPEN && to != CircuitBreaker.State.HALF_OPEN) {
			this.fleetOpen = false; // moved by hand
			this.leading = false;
		}
	}

	/**
	 * How many times this replica's probes closed the breaker for the fleet: a fleet state read
	 * before one of them (still the open it ended) is stale once it comes back.
	 * @return the count
	 */
	long recoveries() {
		return this.recoveries.get();
	}

	private void tell(FleetDecision outcome) {
		if (outcome == FleetDecision.RECOVERED) {
			this.recoveries.incrementAndGet();
		}
		if (this.fleet.isAvailable()) {
			this.fleet.script(PROBED, this.keys, outcome.name(), this.fleet.replica(), this.fleet.channel(), this.name,
					fleetOpenTime().toMillis()).subscribe(null, (error) -> { });
		}
	}

}
