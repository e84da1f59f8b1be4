package dev.llmresilience.spi;

import dev.llmresilience.chat.Outcome;
import dev.llmresilience.gateway.EndpointSettings;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What the observation of one upstream attempt knows, for its {@link AttemptObservationConvention}:
 * the endpoint's settings and operation from the start, how the attempt ended once it has.
 */
public class AttemptObservationContext extends Observation.Context {

	private final EndpointSettings endpoint;

	private final String operation;

	private @Nullable Outcome outcome;

	private boolean failed;

	private boolean cancelled;

	private @Nullable String responseModel;

	/**
	 * Create the context of an attempt.
	 * @param endpoint the endpoint's settings
	 * @param operation the GenAI operation, {@code chat}
	 */
	public AttemptObservationContext(EndpointSettings endpoint, String operation) {
		this.endpoint = endpoint;
		this.operation = operation;
	}

	/**
	 * The endpoint the attempt went to.
	 * @return its settings
	 */
	public EndpointSettings endpoint() {
		return this.endpoint;
	}

	/**
	 * The GenAI operation.
	 * @return {@code chat}
	 */
	public String operation() {
		return this.operation;
	}

	/**
	 * How the attempt ended.
	 * @return its outcome; {@code null} while it runs and when it was cancelled
	 */
	public @Nullable Outcome outcome() {
		return this.outcome;
	}

	/**
	 * Whether the attempt ended in an error.
	 * @return true for a failed attempt
	 */
	public boolean failed() {
		return this.failed;
	}

	/**
	 * Whether the caller let go of the attempt before it ended.
	 * @return true for a cancelled attempt
	 */
	public boolean cancelled() {
		return this.cancelled;
	}

	/**
	 * Whether the attempt has ended, cancelled or not.
	 * @return true once it has
	 */
	public boolean ended() {
		return this.outcome != null || this.cancelled;
	}

	/**
	 * The model named as the response's.
	 * @return the model, or {@code null} while the attempt runs
	 */
	public @Nullable String responseModel() {
		return this.responseModel;
	}

	/**
	 * Records how the attempt ended; called by the gateway, once.
	 * @param outcome the outcome
	 * @param failed whether it failed
	 * @param responseModel the model the provider named
	 */
	public void ended(Outcome outcome, boolean failed, String responseModel) {
		this.outcome = outcome;
		this.failed = failed;
		this.responseModel = responseModel;
	}

	/**
	 * Records that the caller cancelled the attempt; called by the gateway, once.
	 * @param responseModel the model the provider named
	 */
	public void cancelled(String responseModel) {
		this.cancelled = true;
		this.responseModel = responseModel;
	}

}
