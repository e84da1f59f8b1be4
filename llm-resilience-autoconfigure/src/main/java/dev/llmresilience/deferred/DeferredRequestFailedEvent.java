package dev.llmresilience.deferred;

import org.springframework.context.ApplicationEvent;

/**
 * A deferred request gave up after its attempts, or was refused by every endpoint.
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
