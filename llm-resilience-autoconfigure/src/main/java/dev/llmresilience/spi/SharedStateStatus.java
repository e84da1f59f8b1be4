package dev.llmresilience.spi;

import java.time.Instant;

import org.jspecify.annotations.Nullable;

/**
 * Where the shared state stands, as the {@code llm} health contributor and
 * {@code /actuator/llmbreakers} show it.
 *
 * @param type {@code local} or {@code redis}
 * @param available whether the state is shared right now (always true for {@code local})
 * @param replica this replica's name in the shared state, or {@code null} for {@code local}
 * @param replicas replicas seen alive at the last heartbeat (1 for {@code local})
 * @param unavailableSince when sharing stopped, while it is stopped, else {@code null}
 * @param problem why sharing stopped, while it is stopped, else {@code null}
 */
public record SharedStateStatus(String type, boolean available, @Nullable String replica, int replicas,
		@Nullable Instant unavailableSince, @Nullable String problem) {

	/** Nothing shared: this instance keeps its own state. */
	public static final SharedStateStatus LOCAL = new SharedStateStatus("local", true, null, 1, null, null);

}
