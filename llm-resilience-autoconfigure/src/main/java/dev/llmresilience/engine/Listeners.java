package dev.llmresilience.engine;

import java.util.List;
import java.util.function.Consumer;

import dev.llmresilience.chat.Attempt;
import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.gateway.EndpointSettings;
import dev.llmresilience.gateway.LlmGatewayListener;
import dev.llmresilience.gateway.LlmGatewayListener.HedgeOutcome;
import dev.llmresilience.protocol.Completion;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The gateway's {@link LlmGatewayListener}s, told in order; a listener that throws is logged and
 * the others are still told.
 */
final class Listeners implements LlmGatewayListener {

	private static final Log logger = LogFactory.getLog(Listeners.class);

	private final List<LlmGatewayListener> listeners;

	Listeners(List<LlmGatewayListener> listeners) {
		this.listeners = List.copyOf(listeners);
	}

	@Override
	public void onAttempt(String route, EndpointSettings endpoint, Attempt attempt, @Nullable Completion completion) {
		if (this.listeners.isEmpty()) {
			return;
		}
		tell((listener) -> listener.onAttempt(route, endpoint, attempt, completion));
	}

	@Override
	public void onResponse(String route, ChatResponse response) {
		if (this.listeners.isEmpty()) {
			return;
		}
		tell((listener) -> listener.onResponse(route, response));
	}

	@Override
	public void onError(String route, Throwable error) {
		tell((listener) -> listener.onError(route, error));
	}

	@Override
	public void onHedge(String route, String first, String hedge, HedgeOutcome outcome) {
		tell((listener) -> listener.onHedge(route, first, hedge, outcome));
	}

	private void tell(Consumer<LlmGatewayListener> event) {
		for (LlmGatewayListener listener : this.listeners) {
			try {
				event.accept(listener);
			}
			catch (RuntimeException ex) {
				logger.warn("LlmGatewayListener " + listener.getClass().getName() + " failed: " + ex);
			}
		}
	}

}
