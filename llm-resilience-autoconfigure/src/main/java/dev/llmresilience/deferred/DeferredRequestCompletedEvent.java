package dev.llmresilience.deferred;

import dev.llmresilience.chat.ChatResponse;

import org.springframework.context.ApplicationEvent;

/**
 * A deferred request was answered in the background.
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
