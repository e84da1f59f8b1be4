package dev.llmresilience.support;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.llmresilience.gateway.DeferredRequestCompletedEvent;
import dev.llmresilience.gateway.DeferredRequestFailedEvent;

import org.springframework.context.ApplicationEvent;
import org.springframework.context.event.EventListener;

/**
 * An application bean that listens for the deferred queue's events as a user's would, and lets a
 * test wait for the next one (a background attempt ends on an HTTP client thread).
 */
public class DeferredEvents {

	private final BlockingQueue<ApplicationEvent> events = new LinkedBlockingQueue<>();

	@EventListener
	void completed(DeferredRequestCompletedEvent event) {
		this.events.add(event);
	}

	@EventListener
	void failed(DeferredRequestFailedEvent event) {
		this.events.add(event);
	}

	/**
	 * Wait for the next event.
	 * @return the event
	 */
	public ApplicationEvent next() {
		try {
			ApplicationEvent event = this.events.poll(10, TimeUnit.SECONDS);
			if (event == null) {
				throw new AssertionError("No deferred-request event within 10 s");
			}
			return event;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	public <E extends ApplicationEvent> E next(Class<E> type) {
		ApplicationEvent event = next();
		if (!type.isInstance(event)) {
			throw new AssertionError("Expected a " + type.getSimpleName() + " but got " + event);
		}
		return type.cast(event);
	}

	/**
	 * Events received and not yet taken.
	 * @return the count
	 */
	public int waiting() {
		return this.events.size();
	}

}
