package dev.llmresilience.autoconfigure;

/**
 * Thrown at start-up when the {@code llm.*} configuration cannot work. Names the property, what is
 * wrong with it, and what to do; {@link LlmConfigurationFailureAnalyzer} turns it into Boot's
 * failure report. Never contains an API key or a header value.
 */
public class LlmConfigurationException extends RuntimeException {

	private final String property;

	private final String problem;

	private final String action;

	/**
	 * Create an instance.
	 * @param property the property at fault, e.g. {@code llm.endpoints.gpt-4o.base-url}
	 * @param problem what is wrong with it
	 * @param action what to do about it
	 */
	public LlmConfigurationException(String property, String problem, String action) {
		super(property + ": " + problem + ". " + action);
		this.property = property;
		this.problem = problem;
		this.action = action;
	}

	/**
	 * The property at fault.
	 * @return the property's name
	 */
	public String getProperty() {
		return this.property;
	}

	/**
	 * What is wrong.
	 * @return the problem
	 */
	public String getProblem() {
		return this.problem;
	}

	/**
	 * What to do.
	 * @return the action
	 */
	public String getAction() {
		return this.action;
	}

}
