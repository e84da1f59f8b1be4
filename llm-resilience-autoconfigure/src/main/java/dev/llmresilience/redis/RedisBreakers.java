package dev.llmresilience.redis;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.llmresilience.spi.BreakerControl;
import dev.llmresilience.spi.BreakerControl.ManualState;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;

/**
 * The endpoints' breakers, shared by the fleet: a provider outage seen by the replicas opens the
 * breaker on all of them once the fleet's window (the last {@code sliding-window-size} outcomes of
 * every replica) fails as one breaker's would, unless the failures are one replica's own (see
 * {@code breaker-record.lua} for the rule), and so does one replica's evidence of a hang; states set
 * by hand apply on every replica, and on replicas that join later. Each replica keeps its local breaker, which goes on deciding alone when
 * Redis is unavailable.
 */
final class RedisBreakers implements BreakerControl {

	private final RedisFleet fleet;

	private final Map<String, FleetBreaker> breakers = new LinkedHashMap<>();

	/**
	 * Share the breakers of every endpoint.
	 * @param fleet this replica's seat in the fleet
	 * @param breakers the circuit breakers of every endpoint, each named after its endpoint
	 */
	public RedisBreakers(RedisFleet fleet, Collection<CircuitBreaker> breakers) {
		this.fleet = fleet;
		for (CircuitBreaker breaker : breakers) {
			this.breakers.put(breaker.getName(), new FleetBreaker(fleet, breaker));
		}
		fleet.onMessage("breaker", this::received);
		fleet.whenAvailable(() -> Flux.fromIterable(this.breakers.values()).flatMap(FleetBreaker::reconcile).then());
		// a message missed (the channel is at most once) leaves a state from the fleet stale: checked each heartbeat
		fleet.everyHeartbeat(() -> this.breakers.values()
			.stream()
			.filter(FleetBreaker::followsTheFleet)
			.forEach((breaker) -> breaker.reconcile().subscribe(null, (error) -> { })));
	}

	@Override
	public void transition(CircuitBreaker breaker, ManualState state) {
		FleetBreaker shared = this.breakers.get(breaker.getName());
		if (shared != null) {
			shared.transition(state);
		}
		else {
			BreakerControl.apply(breaker, state);
		}
	}

	@Override
	public void openedOnEvidence(CircuitBreaker breaker, String reason) {
		FleetBreaker shared = this.breakers.get(breaker.getName());
		if (shared != null) {
			shared.openedOnEvidence(reason);
		}
	}

	@Override
	public @Nullable String moving(CircuitBreaker breaker) {
		FleetBreaker shared = this.breakers.get(breaker.getName());
		return (shared != null) ? shared.moving() : null;
	}

	/** {@code STATE|replica|endpoint} or {@code OPEN|replica|endpoint|why}, from another replica's decision or transition. */
	private void received(String payload) {
		String[] parts = payload.split("\\|", 4);
		if (parts.length < 3 || parts[1].equals(this.fleet.replica())) {
			return;
		}
		FleetBreaker breaker = this.breakers.get(parts[2]);
		if (breaker != null) {
			breaker.apply(FleetDecision.of(parts[0]), parts[1], (parts.length > 3) ? parts[3] : "");
		}
	}

}
