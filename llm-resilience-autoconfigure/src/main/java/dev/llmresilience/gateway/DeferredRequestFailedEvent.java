package dev.llmresilience.gateway;

import org.springframework.context.ApplicationEvent;

/**
 * A deferred request gave up after its attempts, or was refused by every endpoint.
 *
 * <p>Published once per request on one instance. Over a shared store (Redis) it is published at
 * least once: by the replica whose end of the request counted, or, if that replica dies before it
 * could, by the one that takes its requests over; in the rare case that a replica dies just after
 * it published, the event comes twice, so a listener that acts on it should be idempotent by
 * ticket.
 */
public class DeferredRequestFailedEvent extends ApplicationEvent {

	private final String ticket;

	private final String reason;

	/**
	 * Create an event.
	 * @param source the queue
	 * @param ticket the request's ticket
	 * @param reason why it failed
	 */
	public DeferredRequestFailedEvent(Object source, String ticket, String reason) {
		super(source);
		this.ticket = ticket;
		this.reason = reason;
	}

	public String getTicket() {
		return this.ticket;
	}

	public String getReason() {
		return this.reason;
	}

}
