package dev.llmresilience.engine;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.DeferredRequestFailedEvent;

import org.springframework.context.ApplicationContext;
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

	/**
	 * A replica's listener.
	 * @param replica the replica
	 * @return its listener
	 */
	static FleetEvents of(ApplicationContext replica) {
		return replica.getBean(FleetEvents.class);
	}

	/**
	 * The completion events the fleet published, replica after replica.
	 * @param replicas the fleet
	 * @return the events
	 */
	static List<DeferredRequestCompletedEvent> completed(List<? extends ApplicationContext> replicas) {
		return replicas.stream().flatMap((replica) -> of(replica).completed.stream()).toList();
	}

	/**
	 * The completion events the fleet published for one request.
	 * @param replicas the fleet
	 * @param ticket the request's ticket
	 * @return the events
	 */
	static List<DeferredRequestCompletedEvent> completed(List<? extends ApplicationContext> replicas, String ticket) {
		return completed(replicas).stream().filter((event) -> event.getTicket().equals(ticket)).toList();
	}

}
