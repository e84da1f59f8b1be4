package dev.llmresilience.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.DeferredRequestFailedEvent;

import org.springframework.context.event.EventListener;

/** A replica's listener for the deferred queue's events, as an application's would be. */
final class FleetEvents {

	final List<DeferredRequestCompletedEvent> completed = new CopyOnWriteArrayList<>();

	final List<DeferredRequestFailedEvent> failed = new CopyOnWriteArrayList<>();

	@EventListener
	void completed(DeferredRequestCompletedEvent event) {
		this.completed.add(event);
	}

	@EventListener
	void failed(DeferredRequestFailedEvent event) {
		this.failed.add(event);
	}

}
