package dev.llmresilience.failure;

import java.util.List;

import dev.llmresilience.chat.Attempt;

/**
 * No endpoint of the route could answer now. Raised instead of a {@code BUSY} response when
 * {@code llm.gateway.busy-as-error=true}.
 */
public final class LlmUnavailableException extends LlmException {

	private final String route;

	private final List<Attempt> attempts;

	/**
	 * Create an instance.
	 * @param route the route that was tried
	 * @param attempts every attempt made or refused, in order
	 */
	public LlmUnavailableException(String route, List<Attempt> attempts) {
		super("No endpoint of route '" + route + "' could answer (" + attempts.size()
				+ " attempts); the gateway's busy answer was suppressed by llm.gateway.busy-as-error=true", null, null);
		this.route = route;
		this.attempts = List.copyOf(attempts);
	}

	/**
	 * The route that was tried.
	 * @return the route name
	 */
	public String route() {
		return this.route;
	}

	/**
	 * Every attempt, in order.
	 * @return the attempts
	 */
	public List<Attempt> attempts() {
		return this.attempts;
	}

}
