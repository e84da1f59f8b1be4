package dev.llmresilience.engine;

import org.springframework.context.SmartLifecycle;

/**
 * Stops the endpoints' own half-open probes as soon as the application starts closing, before the
 * web server's graceful shutdown (a lower phase, stopped later): no probe reaches a provider while
 * the application drains its requests or after it has said so. The registry's close, when its
 * beans are destroyed, comes too late for that.
 */
final class ProbesShutdown implements SmartLifecycle {

	private final EndpointRegistry endpoints;

	private volatile boolean running;

	ProbesShutdown(EndpointRegistry endpoints) {
		this.endpoints = endpoints;
	}

	@Override
	public void start() {
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		this.endpoints.stopProbes();
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		// first to stop; the web server's graceful shutdown stops in SmartLifecycle.DEFAULT_PHASE - 1024
		return SmartLifecycle.DEFAULT_PHASE;
	}

}
