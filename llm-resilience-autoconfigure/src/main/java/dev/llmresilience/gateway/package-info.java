/**
 * The public API's entry: {@code LlmGateway}, the listener that watches its calls, the endpoint
 * settings a listener is handed, and the events of a deferred request. For users; the gateway
 * itself is built in the engine.
 */
@NullMarked
package dev.llmresilience.gateway;

import org.jspecify.annotations.NullMarked;
