package dev.llmresilience.openaiapi;

import java.util.concurrent.atomic.AtomicInteger;

import dev.llmresilience.chat.ChatResponse;
import dev.llmresilience.chat.Tier;
import dev.llmresilience.gateway.LlmGatewayListener;

/** Counts the gateway calls that answered BUSY: one per request that reached the gateway. */
final class BusyCounter implements LlmGatewayListener {

	private final AtomicInteger busy = new AtomicInteger();

	@Override
	public void onResponse(String route, ChatResponse response) {
		if (response.tier() == Tier.BUSY) {
			this.busy.incrementAndGet();
		}
	}

	int count() {
		return this.busy.get();
	}

}
