package dev.llmresilience.spi;

import java.time.Instant;
import java.util.function.BiConsumer;

import dev.llmresilience.spi.SharedState.CallCounter;
import org.jspecify.annotations.Nullable;

/**
 * What the replicas of an application tell each other of their providers' rate limits (a
 * provider's limit is its API key's, not a replica's): an endpoint that cannot take calls until a
 * time (a 429, or headers saying a window is empty), and the count of a configured
 * {@code rate-limits.requests-per-minute}. {@link #LOCAL} tells nobody: each replica keeps its own.
 * No method may block: they are called on the call path.
 */
public interface CapacityShare {

	/** Nothing shared: each replica counts its own calls and learns of a 429 only by receiving one. */
	CapacityShare LOCAL = new CapacityShare() {

		@Override
		public void emptied(String endpoint, Instant until) {
		}

		@Override
		public void onEmptied(BiConsumer<String, Instant> listener) {
		}

	};

	/**
	 * This replica learned that an endpoint's provider takes no calls until a time: tell the fleet.
	 * @param endpoint the endpoint's name
	 * @param until when it takes calls again
	 */
	void emptied(String endpoint, Instant until);

	/**
	 * Hear what other replicas learned.
	 * @param listener given the endpoint's name and when it takes calls again
	 */
	void onEmptied(BiConsumer<String, Instant> listener);

	/**
	 * The fleet's count of an endpoint's configured requests per minute, in windows aligned to the
	 * clock's minutes.
	 * @param endpoint the endpoint's name
	 * @param limit requests per minute, fleet-wide
	 * @return the fleet's counter, or {@code null} for this replica's own count
	 */
	default @Nullable CallCounter requestsPerMinute(String endpoint, int limit) {
		return null;
	}

}
