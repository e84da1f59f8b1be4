package dev.llmresilience.gateway;

/**
 * An {@link EndpointSettings} record refused a value that breaks one of its invariants. Names the
 * setting by its key under an endpoint (e.g. {@code circuit-breaker.minimum-number-of-calls}), so
 * that the auto-configuration can report it as the property where the value was set.
 */
public class InvalidSettingException extends IllegalArgumentException {

	private final String setting;

	private final String problem;

	private final String action;

	/**
	 * Create an instance.
	 * @param setting the setting's key under an endpoint, e.g. {@code retry.jitter}
	 * @param problem what is wrong with its value, e.g. "is 1.5, outside [0, 1)"
	 * @param action what to do about it
	 */
	public InvalidSettingException(String setting, String problem, String action) {
		super(setting + ": " + problem + ". " + action);
		this.setting = setting;
		this.problem = problem;
		this.action = action;
	}

	/**
	 * The setting at fault.
	 * @return its key under an endpoint
	 */
	public String setting() {
		return this.setting;
	}

	/**
	 * What is wrong.
	 * @return the problem
	 */
	public String problem() {
		return this.problem;
	}

	/**
	 * What to do.
	 * @return the action
	 */
	public String action() {
		return this.action;
	}

}
