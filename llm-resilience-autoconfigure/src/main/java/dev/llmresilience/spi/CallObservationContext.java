package dev.llmresilience.spi;

import dev.llmresilience.chat.ChatResponse;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What the observation of one gateway call knows, for its {@link CallObservationConvention}: the
 * route from the start, the answer once there is one.
 */
public class CallObservationContext extends Observation.Context {

	private final String route;

	private volatile @Nullable ChatResponse response;

	/**
	 * Create the context of a call.
	 * @param route the route the call took
	 */
	public CallObservationContext(String route) {
		this.route = route;
	}

	/**
	 * The route the call took.
	 * @return its name
	 */
	public String route() {
		return this.route;
	}

	/**
	 * The call's answer.
	 * @return the answer (any tier, BUSY included), or {@code null} while there is none or when the
	 * call ended in an error
	 */
	public @Nullable ChatResponse response() {
		return this.response;
	}

	/**
	 * Records the call's answer; called by the gateway, once.
	 * @param response the answer
	 */
	public void answered(ChatResponse response) {
		this.response = response;
	}

}
