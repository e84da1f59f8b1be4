package dev.llmresilience.shared.redis;

import java.time.Duration;
import java.util.List;

import dev.llmresilience.endpoint.LlmEndpoint;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.event.CircuitBreakerOnStateTransitionEvent;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The fleet probes a failed provider once, not once per replica. When the fleet opens an
 * endpoint's breaker, the replica whose outcomes opened it leads: its breaker opens for
 * {@code wait-duration-in-open-state} and then runs its own half-open phase, as Resilience4j does
 * (probes included); the others follow, open for twice the wait. When the leader's probes succeed
 * it says RECOVERED and every follower closes; when they fail it says REOPENED and the followers
 * stay open for another two waits. A follower that hears nothing (the leader is gone) runs its own
 * half-open phase when its longer wait is over, and leads from then on. Two replicas that probe at
 * once (a race) settle on the one whose name sorts first. A breaker that opened on its own window
 * (this replica's own fault) is not the fleet's: its half-open phase stays its own.
 */
final class FleetProbes {

	private static final Log logger = LogFactory.getLog(FleetProbes.class);

	private static final RedisScript<Long> PROBED = RedisScripts.load("breaker-probed", Long.class);

	private final RedisFleet fleet;

	private final LlmEndpoint endpoint;

	private final CircuitBreaker breaker;

	private final List<String> keys;

	private final Duration wait;

	/** Whether the breaker is open because the fleet's is (as leader or follower). */
	private volatile boolean fleetOpen;

	/** Set while this class moves the breaker, so that its own transitions are not taken for the breaker's. */
	private final ThreadLocal<Boolean> moving = ThreadLocal.withInitial(() -> false);

	FleetProbes(RedisFleet fleet, LlmEndpoint endpoint, List<String> keys) {
		this.fleet = fleet;
		this.endpoint = endpoint;
		this.breaker = endpoint.circuitBreaker();
		this.keys = keys;
		this.wait = endpoint.settings().circuitBreaker().waitDurationInOpenState();
		this.breaker.getEventPublisher().onStateTransition(this::transitioned);
	}

	/** How long the fleet's OPEN lasts in Redis: the leader's wait and the followers' margin. */
	Duration fleetOpenTime() {
		return this.wait.multipliedBy(2);
	}

	/**
	 * The fleet opened the breaker.
	 * @param leader whether this replica's outcomes opened it (it then runs the half-open phase)
	 */
	void opened(boolean leader) {
		CircuitBreaker.State now = this.breaker.getState();
		if (now != CircuitBreaker.State.CLOSED && now != CircuitBreaker.State.OPEN && now != CircuitBreaker.State.HALF_OPEN) {
			return; // forced or disabled by hand
		}
		logger.info("LLM endpoint '" + this.endpoint.name() + "': the fleet's outcomes open its breaker"
				+ (leader ? "; this replica probes it" : "; another replica probes it"));
		this.fleetOpen = true;
		if (leader) {
			if (now != CircuitBreaker.State.OPEN) {
				move(this.breaker::transitionToOpenState);
			}
		}
		else {
			move(() -> this.breaker.transitionToOpenStateFor(fleetOpenTime()));
		}
	}

	/**
	 * The leader's probes failed.
	 * @param leader the replica that probed
	 */
	void reopened(String leader) {
		CircuitBreaker.State now = this.breaker.getState();
		boolean racing = now == CircuitBreaker.State.HALF_OPEN && leader.compareTo(this.fleet.replica()) > 0;
		if (this.fleetOpen && !racing && (now == CircuitBreaker.State.OPEN || now == CircuitBreaker.State.HALF_OPEN)) {
			move(() -> this.breaker.transitionToOpenStateFor(fleetOpenTime()));
		}
	}

	/** The leader's probes succeeded: the provider answers again. */
	void recovered() {
		CircuitBreaker.State now = this.breaker.getState();
		if (this.fleetOpen && (now == CircuitBreaker.State.OPEN || now == CircuitBreaker.State.HALF_OPEN)) {
			logger.info("LLM endpoint '" + this.endpoint.name() + "': the fleet's probes succeeded; closing its breaker");
			move(this.breaker::transitionToClosedState);
		}
		this.fleetOpen = false;
	}

	private void move(Runnable transition) {
		this.moving.set(true);
		try {
			transition.run();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not move the breaker of '" + this.endpoint.name() + "': " + ex);
		}
		finally {
			this.moving.set(false);
		}
	}

	private void transitioned(CircuitBreakerOnStateTransitionEvent event) {
		if (this.moving.get()) {
			return;
		}
		CircuitBreaker.State from = event.getStateTransition().getFromState();
		CircuitBreaker.State to = event.getStateTransition().getToState();
		if (from == CircuitBreaker.State.CLOSED && to == CircuitBreaker.State.OPEN) {
			this.fleetOpen = false; // its own window opened it: this replica's own fault, or so far only its own
		}
		else if (this.fleetOpen && from == CircuitBreaker.State.HALF_OPEN && to == CircuitBreaker.State.OPEN) {
			tell("REOPENED");
		}
		else if (this.fleetOpen && from == CircuitBreaker.State.HALF_OPEN && to == CircuitBreaker.State.CLOSED) {
			this.fleetOpen = false;
			tell("RECOVERED");
		}
		else if (to != CircuitBreaker.State.OPEN && to != CircuitBreaker.State.HALF_OPEN) {
			this.fleetOpen = false; // moved by hand
		}
	}

	private void tell(String outcome) {
		if (this.fleet.isAvailable()) {
			this.fleet.script(PROBED, this.keys, outcome, this.fleet.replica(), this.fleet.channel(), this.endpoint.name(),
					fleetOpenTime().toMillis()).subscribe(null, (error) -> { });
		}
	}

}
