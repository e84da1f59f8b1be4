package dev.llmresilience.support;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * How BlockHound runs in these tests: every blocking call on a Reactor non-blocking thread (Reactor
 * Netty's event loops, the parallel and single schedulers) raises BlockHound's error where it is made
 * and is reported to {@link NoBlockingCalls}, which fails the test; and the allow-list of blocking
 * calls known to be harmless, each a JDK or library internal named by class and method, with why it
 * may block. BlockHound is installed before the first test by its JUnit Platform listener and finds
 * this class through {@code META-INF/services}; Reactor's, Reactor Netty's, Netty's and Spring's own
 * integrations are loaded beside it.
 */
public final class BlockHoundAllowList implements BlockHoundIntegration {

	@Override
	public void applyTo(BlockHound.Builder builder) {
		builder.blockingMethodCallback((method) -> {
			BlockingOperationError error = new BlockingOperationError(method);
			NoBlockingCalls.record(error);
			throw error;
		});
	}

	/** Applied after the libraries' integrations, so that this callback is the one in force. */
	@Override
	public int getPriority() {
		return Integer.MAX_VALUE;
	}

}
