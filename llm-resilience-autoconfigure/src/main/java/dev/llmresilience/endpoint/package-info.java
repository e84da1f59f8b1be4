/**
 * One configured model endpoint: its resolved settings and its own circuit breaker, retry and bulkhead.
 */
@NullMarked
package dev.llmresilience.endpoint;

import org.jspecify.annotations.NullMarked;
