/**
 * Micrometer meters of the gateway: OpenTelemetry GenAI client metrics per attempt and the
 * gateway's own counters. Tags are bounded: never a prompt, a user or a ticket.
 */
@NullMarked
package dev.llmresilience.metrics;

import org.jspecify.annotations.NullMarked;
