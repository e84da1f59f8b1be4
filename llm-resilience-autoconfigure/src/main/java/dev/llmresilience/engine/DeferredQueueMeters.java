package dev.llmresilience.engine;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;

/**
 * Binds the deferred queue's meters: the requests waiting for a background attempt, and those
 * answered and given up in the background. None when deferral is off.
 */
final class DeferredQueueMeters implements MeterBinder {

	private final ObjectProvider<DeferredQueue> queue;

	// looked up when the meters are bound: making the binder, which Boot may do while it sets up the
	// registry, creates none of the gateway's beans
	DeferredQueueMeters(ObjectProvider<DeferredQueue> queue) {
		this.queue = queue;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		this.queue.ifAvailable((queue) -> {
			Gauge.builder("llm.gateway.deferred.pending", queue, DeferredQueue::pending)
				.description("Deferred requests waiting for a background attempt")
				.register(registry);
			FunctionCounter.builder("llm.gateway.deferred.completed", queue, (q) -> q.counts().completed())
				.description("Deferred requests answered in the background")
				.register(registry);
			FunctionCounter.builder("llm.gateway.deferred.failed", queue, (q) -> q.counts().failed())
				.description("Deferred requests that gave up")
				.register(registry);
		});
	}

}
