package dev.llmresilience.gateway;

import dev.llmresilience.chat.ChatResponse;

import org.springframework.context.ApplicationEvent;

/**
 * A deferred request was answered in the background.
 *
 * <p>Published once per request on one instance. Over a shared store (Redis) it is published at
 * least once: by the replica whose end of the request counted, or, if that replica dies before it
 * could, by the one that takes its requests over; in the rare case that a replica dies just after
 * it published, the event comes twice, so a listener that acts on it should be idempotent by
 * ticket.
 */
public class DeferredRequestCompletedEvent extends ApplicationEvent {

	private final String ticket;

	private final ChatResponse response;

	/**
	 * Create an event.
	 * @param source the queue
	 * @param ticket the request's ticket
	 * @param response the answer
	 */
	public DeferredRequestCompletedEvent(Object source, String ticket, ChatResponse response) {
		super(source);
		this.ticket = ticket;
		this.response = response;
	}

	public String getTicket() {
		return this.ticket;
	}

	public ChatResponse getResponse() {
		return this.response;
	}

}
