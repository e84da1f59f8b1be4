/**
 * Guards over all endpoints: the call-volume guard against runaway loops, the daily budget, and the
 * limit on gateway calls in flight.
 */
@NullMarked
package dev.llmresilience.guard;

import org.jspecify.annotations.NullMarked;
