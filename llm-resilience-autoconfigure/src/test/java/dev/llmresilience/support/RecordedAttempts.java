package dev.llmresilience.support;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.Outcome;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGatewayListener;
import dev.llmresilience.protocol.Completion;
import org.jspecify.annotations.Nullable;

/**
 * A gateway listener that keeps every attempt it hears of: the way to see how a stream's attempts
 * were classified, since a stream's caller gets chunks, not a {@code ChatResponse} with attempts.
 */
public final class RecordedAttempts implements LlmGatewayListener {

	private final List<Attempt> attempts = new CopyOnWriteArrayList<>();

	@Override
	public void onAttempt(String route, EndpointSettings endpoint, Attempt attempt, @Nullable Completion completion) {
		this.attempts.add(attempt);
	}

	/**
	 * The outcomes of the attempts so far, in the order they ended.
	 * @return the outcomes
	 */
	public List<Outcome> outcomes() {
		return this.attempts.stream().map(Attempt::outcome).toList();
	}

	/**
	 * The attempts so far, in the order they ended.
	 * @return the attempts
	 */
	public List<Attempt> attempts() {
		return List.copyOf(this.attempts);
	}

}
