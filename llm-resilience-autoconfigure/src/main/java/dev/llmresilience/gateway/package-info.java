/**
 * The public API: LlmGateway, the request and response types, and the gateway that walks a route's endpoints and degrades.
 */
@NullMarked
package dev.llmresilience.gateway;

import org.jspecify.annotations.NullMarked;
